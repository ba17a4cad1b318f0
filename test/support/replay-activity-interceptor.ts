/**
 * Workflow interceptor module for the replay test: reports every activity the workflow schedules (type and
 * arguments) through a sink that also runs during replay. Temporal's own determinism check compares only
 * activity types and sequence numbers; with this the test also sees a call made with other arguments
 * (e.g. two compensations of the same undo tool swapped).
 */
import { proxySinks, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

/** The sink the replay test injects. */
export interface ReplayProbeSinks extends Sinks {
  replayProbe: {
    activityScheduled(activityType: string, args: unknown[]): void;
  };
}

const { replayProbe } = proxySinks<ReplayProbeSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      scheduleActivity(input, next) {
        replayProbe.activityScheduled(input.activityType, input.args);
        return next(input);
      },
    },
  ],
});
