import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One job the downstream accepted. */
export interface DownstreamJob {
  jobId: string;
  key: string;
  value: number;
  callbackUrl?: string;
  /** Polls answered so far, and when each arrived (`Date.now()`). */
  pollTimes: number[];
}

/** What the downstream does with a job: call back after a delay, finish after some polls, or never. */
export interface JobDownstreamBehaviour {
  /** Calls `callbackUrl` with the output this long after the submission (no callback when undefined). */
  callbackAfterMs?: number;
  /** The poll that finds the job done (1-based); never done when undefined. */
  doneAtPoll?: number;
  /** Answers a new submission this much later (its callback may then come before the answer). */
  answerSubmissionAfterMs?: number;
  /** The first this many polls answer 503 (a transient failure that ends the tool's attempt). */
  failFirstPolls?: number;
}

/** A running {@link startJobDownstream}. */
export interface JobDownstream {
  url: string;
  /** Every submission received, deduplicated or not (`POST /jobs`). */
  submissions: string[];
  /** Jobs by id (one per idempotency key: the downstream deduplicates submissions by key). */
  jobs: Map<string, DownstreamJob>;
  /** Answers of the callbacks it sent: HTTP status and body. */
  callbackAnswers: Array<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

/** The output a job of `value` produces. */
export function jobOutput(job: { jobId: string; value: number }): { jobId: string; doubled: number } {
  return { jobId: job.jobId, doubled: job.value * 2 };
}

/**
 * A downstream that works asynchronously: `POST /jobs {key, value, callbackUrl?}` answers `{jobId}` at once
 * (the same id again for a key it knows), `GET /jobs/<id>` answers the job's status; with `callbackAfterMs`
 * it POSTs the output to the job's `callbackUrl` later, from outside any worker.
 */
export async function startJobDownstream(behaviour: JobDownstreamBehaviour): Promise<JobDownstream> {
  const submissions: string[] = [];
  const jobs = new Map<string, DownstreamJob>();
  const callbackAnswers: JobDownstream['callbackAnswers'] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const reply = (status: number, value: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(value));
      };
      if (request.method === 'POST' && request.url === '/jobs') {
        const { key, value, callbackUrl } = JSON.parse(body) as { key: string; value: number; callbackUrl?: string };
        submissions.push(key);
        const known = [...jobs.values()].find((job) => job.key === key);
        if (known) return reply(200, { jobId: known.jobId });
        const job: DownstreamJob = { jobId: `job-${jobs.size + 1}`, key, value, pollTimes: [] };
        if (callbackUrl !== undefined) job.callbackUrl = callbackUrl;
        jobs.set(job.jobId, job);
        if (behaviour.callbackAfterMs !== undefined && callbackUrl) {
          const timer = setTimeout(() => {
            timers.delete(timer);
            void callBack(callbackUrl, jobOutput(job), callbackAnswers);
          }, behaviour.callbackAfterMs);
          timers.add(timer);
        }
        const delay = behaviour.answerSubmissionAfterMs ?? 0;
        if (delay === 0) return reply(200, { jobId: job.jobId });
        const answer = setTimeout(() => {
          timers.delete(answer);
          reply(200, { jobId: job.jobId });
        }, delay);
        return timers.add(answer);
      }
      const polled = request.method === 'GET' ? /^\/jobs\/([^/]+)$/.exec(request.url ?? '') : null;
      const job = polled ? jobs.get(polled[1]!) : undefined;
      if (!job) return reply(404, { error: 'no such job' });
      job.pollTimes.push(Date.now());
      const polls = job.pollTimes.length;
      if (polls <= (behaviour.failFirstPolls ?? 0)) return reply(503, { error: 'restarting' });
      if (behaviour.doneAtPoll !== undefined && polls >= behaviour.doneAtPoll) {
        return reply(200, { done: true, output: jobOutput(job) });
      }
      return reply(200, { done: false, percent: Math.min(99, polls * 10) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    submissions,
    jobs,
    callbackAnswers,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function callBack(url: string, output: unknown, answers: JobDownstream['callbackAnswers']): Promise<void> {
  try {
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(output) });
    answers.push({ status: response.status, body: await response.json() });
  } catch (error) {
    answers.push({ status: 0, body: String(error) });
  }
}
