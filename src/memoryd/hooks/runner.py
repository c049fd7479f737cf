"""One hook invocation as a process: stdin in, hook JSON out, within a hard deadline, exit 0.

Everything a hook does (reading stdin, opening the store, loading the model,
talking to a server) runs in a worker thread that the main thread waits
for no longer than the event's deadline, set under the timeout the plugin's
``hooks.json`` gives Claude Code. Past it, or on any error, the hook logs
why and exits 0 with nothing on stdout, which Claude Code treats as a hook
that had nothing to say: never a blocked prompt, stop or compaction.

``session-end`` is not done here at all when the hook is a process: it is
written down and handed to a detached ``memoryd hook handed-off`` process
(:mod:`memoryd.hooks.handoff` says why), which :func:`run_handed_off` is.

An embedded smart-ingest task that is still running when a capture hook is
done is not waited for (closing the store would wait for it): a detached
``memoryd hook drain`` process finishes it once this one has exited, and
this one leaves with ``os._exit``. Were the drain process never to run,
the task is still safe: the next worker to start on the home queues it
again (``TaskWorker.start``).
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from memoryd.client import ServerError
from memoryd.continuity.model import Trigger
from memoryd.errors import StorageError, ValidationError
from memoryd.home import default_home
from memoryd.hooks import capture, checkpoint, handoff, resident, session_start, user_prompt
from memoryd.hooks.backend import EmbeddedBackend, HookBackend, host_session, open_backend
from memoryd.hooks.config import HookConfig
from memoryd.hooks.detach import spawn_memoryd
from memoryd.hooks.log import start_log
from memoryd.hooks.output import HookResult
from memoryd.sdk import Memory

log = logging.getLogger(__name__)

Handler = Callable[[Mapping[str, Any], HookBackend, HookConfig], HookResult]


@dataclass(frozen=True)
class Event:
    name: str  # Claude Code's event name
    handler: Handler
    deadline_s: float  # under the plugin's hooks.json timeout for the event


# the `memoryd hook` subcommands; hooks.json timeouts: 15, 10, 30, 30, 10, 5 seconds (Claude
# Code gives SessionEnd 1.5 s whatever a plugin says: as a process it is only handed off)
EVENTS: dict[str, Event] = {
    "session-start": Event(
        "SessionStart", session_start.run, resident.DEADLINES_S["session-start"]
    ),
    "user-prompt": Event("UserPromptSubmit", user_prompt.run, resident.DEADLINES_S["user-prompt"]),
    "stop": Event("Stop", checkpoint.saving_first(capture.stop, "stop", Trigger.AGENT_END), 25.0),
    "pre-compact": Event(
        "PreCompact",
        checkpoint.saving_first(capture.pre_compact, "pre-compact", Trigger.RESET),
        25.0,
    ),
    "post-tool-use": Event("PostToolUse", checkpoint.post_tool_use, 7.0),
    "session-end": Event("SessionEnd", checkpoint.session_end, 4.0),
}
MAX_STDIN_BYTES = 8 * 1024 * 1024
# the drain process: how long it waits for the hook to exit, and for the task to finish
PARENT_EXIT_WAIT_S = 30.0
DRAIN_MAX_S = 900.0


def parse_payload(data: bytes) -> dict[str, Any]:
    """The hook's JSON object from the bytes of stdin; ``{}`` (and a log line) for anything else."""
    if len(data) > MAX_STDIN_BYTES:
        log.warning("hook input is over %d bytes: ignored", MAX_STDIN_BYTES)
        return {}
    if not data.strip():
        return {}
    try:
        payload = json.loads(data.decode("utf-8", errors="replace"))
    except ValueError as exc:
        log.warning("hook input is not JSON: %s", exc)
        return {}
    if not isinstance(payload, dict):
        log.warning("hook input is not a JSON object")
        return {}
    return payload


def run_hook(
    command: str,
    *,
    home: Path | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    environ: Mapping[str, str] | None = None,
    exit_process: bool = True,
) -> int:
    """Run one ``memoryd hook COMMAND``; the exit code is always 0.

    ``exit_process=False`` (in-process callers) returns instead of leaving
    with ``os._exit`` when the deadline passes or a task is handed on.
    A hook process (``exit_process=True``) of a hook the home's resident
    process answers asks it, and starts it when there is none
    (:mod:`memoryd.hooks.resident`); one of a hook that is handed off
    (``session-end``) writes it down for a background process
    (:mod:`memoryd.hooks.handoff`). In-process callers do the hook themselves.
    """
    config = HookConfig.from_env(environ, home)
    stop_log = start_log(config)
    started = time.monotonic()
    event = EVENTS[command]
    out = stdout if stdout is not None else sys.stdout.buffer
    for problem in config.problems:
        log.warning("%s: %s (default used)", command, problem)

    answered = threading.Event()
    state: dict[str, Any] = {}

    def work() -> None:
        backend: HookBackend | None = None
        try:
            source = stdin if stdin is not None else sys.stdin.buffer
            interactive = stdin is None and sys.stdin.isatty()
            data = b"" if interactive else source.read(MAX_STDIN_BYTES + 1)
            env = os.environ if environ is None else environ
            if exit_process and not interactive and _handed_off(command, config, data, env):
                state["result"] = HookResult()
                return
            if exit_process and command == "session-start":
                handoff.resume(config.home or default_home())
            if exit_process and not interactive and not config.remote:
                answered_by = _through_resident(command, config, data, env)
                if answered_by is not None:
                    state["result"] = answered_by
                    return
            payload = parse_payload(data)
            backend = open_backend(config, host_session(payload))
            state["result"] = event.handler(payload, backend, config)
        except Exception:
            log.exception("%s failed", command)
        finally:
            answered.set()
        result: HookResult | None = state.get("result")
        if backend is not None and (result is None or result.pending_task is None):
            try:
                backend.close()
            except Exception:
                log.exception("%s: closing the store failed", command)

    thread = threading.Thread(target=work, name=f"memoryd-hook-{command}", daemon=True)
    thread.start()
    if not answered.wait(event.deadline_s):
        log.error(
            "%s: no answer within %.0fs; gave up, nothing injected", command, event.deadline_s
        )
        return _leave(stop_log, exit_process)

    result: HookResult | None = state.get("result")
    if result is not None and result.output is not None:
        try:
            out.write(json.dumps(result.output, ensure_ascii=False).encode("utf-8") + b"\n")
            out.flush()
        except OSError as exc:
            log.warning("%s: cannot write the answer: %s", command, exc)
    if result is not None and result.pending_task is not None:
        spawn_drain(result.pending_task, config)
        log.info("%s: done in %.2fs", command, time.monotonic() - started)
        return _leave(stop_log, exit_process)
    thread.join(max(0.0, event.deadline_s - (time.monotonic() - started)))
    if thread.is_alive():
        log.error("%s: closing the store took too long; left without it", command)
        return _leave(stop_log, exit_process)
    log.info("%s: done in %.2fs", command, time.monotonic() - started)
    stop_log()
    return 0


def _handed_off(command: str, config: HookConfig, data: bytes, environ: Mapping[str, str]) -> bool:
    """Whether the hook was written down for a background process (False: do it here)."""
    if command not in handoff.HANDED_OFF:
        return False
    try:
        path = handoff.hand_off(config.home or default_home(), command, data, environ)
    except OSError as exc:
        log.warning("%s: cannot write the hook down (%s); done in this process", command, exc)
        return False
    log.info("%s: handed to a background process (%s)", command, path.name)
    return True


def _through_resident(
    command: str, config: HookConfig, data: bytes, environ: Mapping[str, str]
) -> HookResult | None:
    """The resident's answer to this hook; None to answer in this process.

    With no resident running, one is started for the next hooks and this
    one answers in process. A resident that does not answer properly costs
    this hook its injection (logged), not a second wait.
    """
    if command not in resident.DEADLINES_S or not resident.enabled(environ):
        return None
    home = config.home or default_home()
    try:
        sock = resident.connect(home)
    except resident.NotRunning:
        args = ["hook", "resident", "--idle", f"{resident.idle_minutes(environ):g}"]
        try:
            spawn_memoryd(args, config.home)
            log.info("%s: no resident process; started one, answering in process", command)
        except OSError as exc:
            log.warning("%s: cannot start the resident process: %s", command, exc)
        return None
    try:
        output = resident.ask(sock, command, data, environ, EVENTS[command].deadline_s)
    except (OSError, ValueError) as exc:
        log.warning("%s: the resident process did not answer (%s); nothing injected", command, exc)
        return HookResult()
    return HookResult(output)


def _leave(stop_log: Callable[[], None], exit_process: bool) -> int:
    """Exit now, whatever the worker thread is doing: the deadline is the promise."""
    stop_log()
    if exit_process:
        sys.stdout.flush()
        os._exit(0)
    return 0


def spawn_drain(task_id: str, config: HookConfig) -> None:
    """Start a detached ``memoryd hook drain`` that finishes ``task_id`` after this process."""
    try:
        spawn_memoryd(
            ["hook", "drain", "--task", task_id, "--after-pid", str(os.getpid())], config.home
        )
    except OSError as exc:
        log.warning(
            "cannot start the drain process (%s): task %s waits for the next worker", exc, task_id
        )
    else:
        log.info("task %s still running: handed to a background process", task_id)


def _gone(pid: int) -> bool:
    if os.name == "nt":  # os.kill(pid, 0) would terminate it on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def drain(task_id: str, after_pid: int | None, *, home: Path | None = None) -> int:
    """Finish an ingest task a hook left running, once that hook's process has exited.

    The task's worker (the hook's) is dead by then, so this process's worker
    queues it again on start and runs it, with no time limit but
    ``DRAIN_MAX_S``: nobody is waiting for this process.
    """
    config = HookConfig.from_env(home=home)
    stop_log = start_log(config)
    try:
        deadline = time.monotonic() + PARENT_EXIT_WAIT_S
        while after_pid and not _gone(after_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        with Memory(config.home) as memory:
            memory.service.start_worker()
            try:
                task = memory.wait_for_task(task_id, DRAIN_MAX_S)
                log.info("drain: task %s %s", task_id, task["status"])
            except ValidationError as exc:
                log.warning("drain: %s; it resumes on the next worker start", exc.message)
    except Exception:
        log.exception("drain of task %s failed", task_id)
    finally:
        stop_log()
    return 0


def summarize_checkpoint(checkpoint_id: str, *, home: Path | None = None) -> int:
    """The LLM's summary of a checkpoint a hook saved; failures go to the hook log. Exit 0."""
    config = HookConfig.from_env(home=home)
    stop_log = start_log(config)
    try:
        with Memory(config.home) as memory:
            EmbeddedBackend(memory).summarize_now(checkpoint_id)
    except Exception:
        log.exception("summary of checkpoint %s failed", checkpoint_id)
    finally:
        stop_log()
    return 0


def consolidate_session(agent_id: str, session_id: str, *, home: Path | None = None) -> int:
    """Condense an ended session's layers, then resting ones, and apply retention. Exit 0."""
    config = HookConfig.from_env(home=home)
    stop_log = start_log(config)
    try:
        with Memory(config.home) as memory:
            EmbeddedBackend(memory).consolidate_now(agent_id, session_id)
    except Exception:
        log.exception("consolidation of session %s failed", session_id)
    finally:
        stop_log()
    return 0


# a failure worth another try: the server or the database may be back by then
RETRIED = (ServerError, StorageError, OSError)


def run_handed_off(*, home: Path | None = None) -> int:
    """``memoryd hook handed-off``: do the hooks written down in the home, oldest first. Exit 0.

    Each record is done with the store and agent of the session that wrote
    it (its settings over this process's), with no deadline: nobody waits
    for this process. A record whose save failed for a reason that
    may pass stays for the next try (``hooks.handoff``).
    """
    config = HookConfig.from_env(home=home)
    stop_log = start_log(config)
    where = config.home or default_home()
    try:
        for record in handoff.claim_each(where):
            record.done = _do_handed_off(record, where)
            if not record.done and record.expired:
                log.warning(
                    "%s: %s written %.0fh ago still fails: dropped",
                    record.command,
                    record.path.name,
                    record.age_s / 3600,
                )
    except Exception:
        log.exception("the handed-off hooks failed")
    finally:
        stop_log()
    return 0


def _do_handed_off(record: handoff.Record, home: Path) -> bool:
    """One record; False when it is worth another try."""
    if record.command not in handoff.HANDED_OFF:
        log.warning("%s: unknown hook %r: dropped", record.path.name, record.command)
        return True
    config = HookConfig.from_env(handoff.environment(record.env, os.environ), home)
    payload = parse_payload(record.payload)
    started = time.monotonic()
    try:
        backend = open_backend(config, host_session(payload), background=True)
        try:
            checkpoint.end_session(payload, backend, config)
        finally:
            backend.close()
    except RETRIED as exc:
        log.warning("%s failed (%s); kept for another try", record.command, exc)
        return False
    except Exception:
        log.exception("%s failed", record.command)
        return True
    log.info(
        "%s: done in the background in %.2fs, %.1fs after the hook",
        record.command,
        time.monotonic() - started,
        record.age_s,
    )
    return True
