"""The task convention's two workflows as MCP prompts: plan a goal, work its ready steps."""

from __future__ import annotations

from mcp.server import MCPServer


def add_prompts(server: MCPServer) -> None:
    """The task convention's two workflows as prompts: make a plan, work its ready steps."""

    @server.prompt(
        name="plan",
        title="Plan a goal as tasks",
        description="Break a goal into a goal task with ordered step tasks in this store.",
    )
    def plan(goal: str) -> str:
        return (
            f"Plan this goal as tasks: {goal}\n\n"
            "Create one goal task with task_create, then one task per step with "
            "parent=<the goal's id>, and blockers=[...] for the steps that must be done "
            "first. Keep each title one line; put details in body. Finish by listing the "
            "plan with task_list(parent=<goal id>, status='all')."
        )

    @server.prompt(
        name="work-ready-steps",
        title="Work the ready steps",
        description="Claim and work the ready steps of a goal, one at a time, until none is left.",
    )
    def work_ready_steps(goal: str = "", assignee: str = "agent") -> str:
        under = f" under {goal}" if goal else ""
        scope = f"parent='{goal}', " if goal else ""
        return (
            f"Work the ready steps{under}.\n\n"
            f"Repeat: task_list({scope}status='ready'); if it lists nothing, stop. Else "
            f"task_claim(id, assignee='{assignee}') the first one, read it with task_read, "
            "do the work, then task_update(id, status='done', note=<what you did>), or "
            "status='failed' with a note saying why. The goal closes itself when its last "
            "step is done."
        )
