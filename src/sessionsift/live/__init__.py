"""The live-state questions, written once for every agent: `status`, `wait`, `whoami`, `agents`.

Each asks the session's provider for a capability (``Provider.live_state``, ``wait_for``,
``whoami``, ``subagents``; the shared shapes and the verdict vocabulary are in
``providers/liveness.py``) and never an agent's name. An agent whose disk cannot answer says why
(``Provider.lacks``, ``LiveState.invisible``), with evidence.

- :func:`status.status` (``selection -> StatusResult``): one verdict per session;
- :func:`wait.wait` (one session, a condition, a timeout -> ``WaitResult``);
- :func:`whoami.whoami` (``env, selection -> WhoamiResult``): the calling session;
- :func:`agents.agents` (``selection -> AgentsResult``): subagents joined to their spawning calls.
"""
