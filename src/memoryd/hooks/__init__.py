"""Claude Code hooks: recall injected when it helps, the conversation saved before it is lost.

``memoryd hook <event>`` reads Claude Code's hook JSON on stdin and answers in
its hook JSON on stdout. Every hook is bounded in time and fails open: an
error is written to the hook log (``<home>/logs/hooks.log``) and the hook
exits 0 printing nothing, because a memory layer that blocks a session, a
prompt or a compaction does more harm than one that forgets.

* ``session_start``: the profile and memories, also after a compaction;
* ``user_prompt``: memories relevant to the prompt, and "remember this";
* ``capture`` (``stop``, ``pre_compact``): the recent transcript to smart ingest.

The store is the embedded one (the home), or a memoryd server when
``MEMORYD_URL`` / ``OMEM_API_URL`` is set (``hooks.config``). With the
embedded store, the prompt hooks are answered by the home's resident process
once one runs (``hooks.resident``), so a prompt does not wait for the model
to load.
"""
