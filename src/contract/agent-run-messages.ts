import { defineQuery } from '@temporalio/workflow';
import type { AgentRunState } from './agent-run-types';

/** Query: the run's state: status, steps with tool, arguments, status and observation. */
export const getRunStateQuery = defineQuery<AgentRunState>('getRunState');
