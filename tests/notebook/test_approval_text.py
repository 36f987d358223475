"""The approval request as text and HTML: untrusted names and values never become markup."""

from __future__ import annotations

from ollie_nb.notebook._approval import ApprovalRequest, escape_invisible, request_html, shown


def test_names_and_values_are_escaped_and_invisible_characters_shown():
    request = ApprovalRequest(
        "x<img src=x onerror=alert(1)>",
        "srv\u200b",
        {"code": "rm -rf /tmp/x\u202e</pre><script>", "timeout": 5},
        frozenset({"code", "timeout"}),
    )
    html = request_html(request)
    assert "<img" not in html and "<script>" not in html
    assert "x&lt;img src=x onerror=alert(1)&gt;" in html
    assert "srv\\u200b" in html and "\\u202e&lt;/pre&gt;&lt;script&gt;" in html
    assert request.unknown_keys == []


def test_cuts_are_marked_and_newlines_and_tabs_stay():
    assert shown("a" * 25, limit=10) == "a" * 10 + "\n… [15 more characters not shown]"
    assert shown("short") == "short"
    assert escape_invisible("a\tb\nc\x07\U000e0041") == "a\tb\nc\\u0007\\U000e0041"
