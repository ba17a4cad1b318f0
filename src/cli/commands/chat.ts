import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline/promises';
import { closeConversation, startConversation } from '../../client/conversation-client';
import { loadAgentModule } from '../agent-module';
import { parseCommandArgs, stringOption } from '../args';
import { chatTurn, type ChatSession } from '../chat-session';
import { EXIT_CODES, type CliCommand } from '../command';
import { connectForCommand } from '../connect';
import { startCommandTracing, traced } from '../command-tracing';
import { openCommandStreamStore } from '../stream-store';

/** `durable-tools chat <agent module>`: talks with an agent in a conversation, one message per line. */
export const chatCommand: CliCommand = {
  name: 'chat',
  help: `usage: durable-tools chat <agent module> [--id <id>] [--agent <export>] [options]

Starts (or, with --id of an open one, continues) a conversation with the agent the module exports (made with
defineAgent) and reads your messages, one per line. Each answer is printed as the model writes it; a tool call
that needs approval is shown and asked about inline (y approves, anything else rejects). A worker must be
running the agent's tools (\`durable-tools dev\` or \`worker\`). See docs/conversations.md.

  /close        closes the conversation (its effects stand) and exits
  Ctrl-D        exits; the conversation stays open (continue it with --id)

options:
  --id <id>           the conversation's workflow id (default chat-<uuid>)
  --agent <export>    the module's export to talk to (default: the default export, \`agent\`, or its only agent)
  --task-queue <q>    task queue of the workers (default DURABLE_TOOLS_TASK_QUEUE or durable-tools)
  --approver <name>   who approves inline (default: $USER)
  --no-stream         print each answer once complete, not as it is written
  -h, --help          this help

exit codes: 0 closed or left, 3 a message's turn failed (the conversation ended), 1 an error, 2 bad arguments`,
  async run(argv, context) {
    const { values, positionals, help } = parseCommandArgs(
      argv,
      {
        id: { type: 'string' },
        agent: { type: 'string' },
        'task-queue': { type: 'string' },
        approver: { type: 'string' },
        'no-stream': { type: 'boolean' },
      },
      { min: 1, max: 1, names: '<agent module>' },
    );
    if (help) return (context.out(chatCommand.help), EXIT_CODES.ok);
    const agent = await loadAgentModule(positionals[0]!, context, stringOption(values, 'agent'));
    const tracing = await startCommandTracing(context, 'chat');
    const { client, settings } = await connectForCommand(context, { tracing });
    const id = stringOption(values, 'id') ?? `chat-${randomUUID()}`;
    const taskQueue = stringOption(values, 'task-queue', settings.taskQueue)!;
    // Continuing a conversation goes on in its trace; its messages and inline approvals are spans of it.
    const handle = await traced(tracing, client, values.id !== undefined ? { run: id } : {}, () =>
      startConversation(client, agent, { id, taskQueue }),
    );
    const streams = values['no-stream'] === true ? undefined : await openCommandStreamStore(context);
    const prompt = createInterface({ input: process.stdin, output: process.stdout });
    context.lifecycle.defer('the prompt', () => prompt.close());
    context.out(`Conversation ${id} with ${agent.name}. /close ends it; Ctrl-D leaves it open.`);
    const session: ChatSession = {
      client,
      handle,
      prompt,
      write: (text) => process.stdout.write(text),
      ...(streams ? { streams } : {}),
      approver: stringOption(values, 'approver') ?? (context.env.USER || 'chat'),
    };
    const loop = () => chatLoop(session, context.out);
    return await (tracing ? tracing.inRunTrace(client, id, loop) : loop());
  },
};

/** Reads a message per line and answers it, until /close, Ctrl-D or a failed turn. */
async function chatLoop(session: ChatSession, out: (line: string) => void): Promise<number> {
  const ended = new Promise<undefined>((resolve) => session.prompt.once('close', () => resolve(undefined)));
  for (;;) {
    const line = await Promise.race([session.prompt.question('you> '), ended]);
    if (line === undefined) {
      out(`\nLeft the conversation open: ${session.handle.workflowId}`);
      return EXIT_CODES.ok;
    }
    const text = line.trim();
    if (text === '') continue;
    if (text === '/close') {
      const view = await closeConversation(session.handle);
      out(`Conversation ${session.handle.workflowId} ${view.status} after ${view.messages.length} messages.`);
      return EXIT_CODES.ok;
    }
    const reply = await chatTurn(session, text);
    if (reply.status === 'failed') return EXIT_CODES.runNotCompleted;
  }
}
