"""An example user-written coder-eval criterion in Python: the agent wrote a file that
says the expected words, and ran the expected command.

Params (the task file's `params:`):
  file:    the file to check, relative to the workspace (default "hello.txt")
  words:   words the file must contain (default ["hello"])
  command: optional text that one of the agent's shell commands must contain

Score: the mean of the checks (the share of words found, and 1 or 0 for the command).

The host calls `Criterion.grade` once per run, in a sandbox: the workspace is readable
(read-only) at `input.workspace` ("/workspace"); there is no network, no environment and
no other file. Keep state in module globals if you need any, not on `self`.
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import coder_eval_events_types as events
from wit_world.imports.coder_eval_grader_types import GradingError, GradingInput, Verdict


def shell_commands(trajectory):
    """The shell commands the agent ran: tool inputs with a `command` (or `cmd`)."""
    commands = []
    for stamped in trajectory:
        event = stamped.event
        if isinstance(event, events.Event_ToolCallStarted):
            try:
                tool_input = json.loads(event.value.input_json)
            except ValueError:
                continue
            command = tool_input.get("command", tool_input.get("cmd"))
            if isinstance(command, list):
                command = " ".join(str(part) for part in command)
            if isinstance(command, str):
                commands.append(command)
    return commands


class Criterion(exports.Criterion):
    def grade(self, input: GradingInput) -> Verdict:
        # Bad parameters are the criterion's error (score 0), not a failed check.
        try:
            params = json.loads(input.params_json or "{}")
        except ValueError as e:
            raise Err(GradingError(f"params are not JSON: {e}"))
        name = params.get("file", "hello.txt")
        words = params.get("words", ["hello"])
        command = params.get("command")
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise Err(GradingError("`words` must be a list of strings"))
        if ".." in name.split("/") or name.startswith("/"):
            raise Err(GradingError(f"`file` must stay inside the workspace: {name}"))

        scores, notes = [], []
        try:
            with open(f"{input.workspace}/{name}", encoding="utf-8") as f:
                text = f.read()
            found = [w for w in words if w in text]
            scores.append(len(found) / len(words) if words else 1.0)
            notes.append(f"{name} has {len(found)}/{len(words)} words")
        except OSError as e:
            scores.append(0.0)
            notes.append(f"cannot read {name}: {e.strerror or e}")

        if command:
            ran = [c for c in shell_commands(input.trajectory) if command in c]
            scores.append(1.0 if ran else 0.0)
            notes.append(f"ran {command!r}: {'yes' if ran else 'no'}")

        score = sum(scores) / len(scores)
        return Verdict(score=score, pass_=score >= 0.9, details="; ".join(notes))
