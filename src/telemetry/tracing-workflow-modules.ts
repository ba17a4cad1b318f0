/**
 * The workflow interceptors of `@temporalio/interceptors-opentelemetry`, bundled with the workflows of a traced
 * worker. A worker that bundles its workflows adds them itself; a pre-built bundle must include them:
 *
 * @example
 * ```ts
 * const { code } = await bundleWorkflowCode({
 *   workflowsPath, // your workflows module
 *   workflowInterceptorModules: [...TRACING_WORKFLOW_MODULES],
 * });
 * ```
 */
export const TRACING_WORKFLOW_MODULES: readonly string[] = [
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];
