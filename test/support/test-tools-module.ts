/** A tools module (`DURABLE_TOOLS_TOOLS_MODULE`) with the recording test tools, for commands started by tests. */
import { createRecordingTools } from './test-tools';

export const tools = createRecordingTools().tools;
