// An example coder-eval criterion in JavaScript: the agent wrote a file that says the
// expected words, and ran the expected command. See README.md for the params and the
// build (componentize-js, offline once installed).
import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';

/** The text of `name` in the workspace (preopened read-only at `workspace`). */
function readWorkspaceFile(workspace, name) {
  const preopen = getDirectories().find(([, path]) => path === workspace);
  if (!preopen) throw new Error(`${workspace} is not preopened`);
  const file = preopen[0].openAt({}, name, {}, { read: true });
  const size = file.stat().size;
  const bytes = file.read(size, 0n)[0];
  return new TextDecoder().decode(bytes);
}

/** The shell commands the agent ran: tool inputs with a `command` (or `cmd`). */
function shellCommands(trajectory) {
  const commands = [];
  for (const { event } of trajectory) {
    if (event.tag !== 'tool-call-started') continue;
    let input;
    try {
      input = JSON.parse(event.val.inputJson);
    } catch {
      continue;
    }
    let command = input?.command ?? input?.cmd;
    if (Array.isArray(command)) command = command.join(' ');
    if (typeof command === 'string') commands.push(command);
  }
  return commands;
}

export const criterion = {
  // Returns the verdict; a thrown `{ message }` is the criterion's error (score 0).
  grade(input) {
    let params;
    try {
      params = JSON.parse(input.paramsJson || '{}');
    } catch (e) {
      throw { message: `params are not JSON: ${e.message}` };
    }
    const name = params.file ?? 'hello.txt';
    const words = params.words ?? ['hello'];
    if (!Array.isArray(words) || !words.every((w) => typeof w === 'string')) {
      throw { message: '`words` must be a list of strings' };
    }
    if (name.startsWith('/') || name.split('/').includes('..')) {
      throw { message: `\`file\` must stay inside the workspace: ${name}` };
    }
    const scores = [];
    const notes = [];
    try {
      const text = readWorkspaceFile(input.workspace, name);
      const found = words.filter((w) => text.includes(w));
      scores.push(words.length ? found.length / words.length : 1);
      notes.push(`${name} has ${found.length}/${words.length} words`);
    } catch (e) {
      scores.push(0);
      notes.push(`cannot read ${name}: ${e?.payload ?? e?.message ?? e}`);
    }
    if (params.command) {
      const ran = shellCommands(input.trajectory).some((c) => c.includes(params.command));
      scores.push(ran ? 1 : 0);
      notes.push(`ran '${params.command}': ${ran ? 'yes' : 'no'}`);
    }
    const score = scores.reduce((a, b) => a + b, 0) / scores.length;
    return { score, pass: score >= 0.9, details: notes.join('; ') };
  },
};
