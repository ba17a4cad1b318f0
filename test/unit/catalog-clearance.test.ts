import type { CatalogClearanceRules } from '../../src/contract/fused-step';
import { FAST_PATH_LIMITS } from '../../src/contract/fast-path';
import { FETCH_TOOL_RESULT_TOOL } from '../../src/contract/fetch-tool-result';
import type { ToolCatalogEntry } from '../../src/contract/tool-catalog-entry';
import { DESCRIBE_TOOLS_TOOL } from '../../src/contract/tool-disclosure';
import { clearCatalog, clearedTools, type ClearanceContext } from '../../src/workflows/fused-clearance';
import { PAY_ENTRY } from '../support/fast-path-fixtures';

/**
 * How the first fused step of a run clears the tools of the catalog it reads itself (fused-clearance.ts,
 * docs/fast-path.md "The first step"): as the workflow clears them once it has the catalog.
 */

const pay = PAY_ENTRY;
const read: ToolCatalogEntry = { ...pay, name: 'read', effect: 'read-only' };
const book: ToolCatalogEntry = { ...pay, name: 'book', effect: 'compensable', undo: 'cancel' };
const cancel: ToolCatalogEntry = { ...pay, name: 'cancel', effect: 'compensable' };
const rules: CatalogClearanceRules = { approval: {}, maxToolTimeoutMs: FAST_PATH_LIMITS.maxToolTimeoutMs };

const names = (catalog: ToolCatalogEntry[], given: Partial<CatalogClearanceRules> = {}) =>
  clearCatalog(catalog, { ...rules, ...given }).tools.map((tool) => tool.entry.name);

describe('the clearance of the catalog a first step reads', () => {
  test('clears what the workflow clears of the same visible tools, with the effect-tier mark', () => {
    const catalog = [pay, read, book, cancel, { ...pay, name: 'ask', approval: 'always' as const }];
    const ctx: ClearanceContext = {
      step: { fastPath: { on: true }, undoTools: new Set(['cancel']), approvals: { policy: {} } },
      disclosedOnDemand: false,
      background: { handles: () => false },
    };
    const visible = catalog.filter((entry) => entry.name !== 'cancel');
    expect(clearCatalog(catalog, rules)).toEqual({ tools: clearedTools(visible, ctx), disclosedOnDemand: false });
    expect(clearCatalog(catalog, rules).tools).toEqual([
      { entry: pay, irreversible: true },
      { entry: read, irreversible: false },
    ]);
  });

  test('leaves out the tools the run does not allow, in the order the run allows them', () => {
    expect(names([pay, read], { allowedTools: ['read'] })).toEqual(['read']);
    expect(names([pay, read], { allowedTools: ['read', 'pay'] })).toEqual(['read', 'pay']);
  });

  test("leaves out the tools the run's approval policy makes ask", () => {
    expect(names([pay, read], { approval: { requireForEffects: true } })).toEqual(['read']);
    expect(names([pay, read], { approval: { tools: { read: 'always' } } })).toEqual(['pay']);
  });

  test('leaves out a tool with a longer attempt timeout than the bound, even one declared local', () => {
    const slowLocal: ToolCatalogEntry = {
      ...read,
      execution: 'local',
      timeoutMs: FAST_PATH_LIMITS.maxToolTimeoutMs + 1,
    };
    expect(names([slowLocal, pay])).toEqual(['pay']);
    expect(names([slowLocal, pay], { maxToolTimeoutMs: FAST_PATH_LIMITS.maxToolTimeoutMs + 1 })).toEqual([
      'read',
      'pay',
    ]);
  });

  test('leaves fetch-later tools to the background, as the run does when it offers fetch_tool_result', () => {
    const later: ToolCatalogEntry = {
      ...read,
      name: 'report',
      execution: 'local',
      asyncJob: { fetchLater: true } as ToolCatalogEntry['asyncJob'],
    };
    expect(names([later, pay])).toEqual(['pay']);
    // A catalog with a tool of that name offers no fetch-later: its call is an ordinary one.
    expect(names([later, { ...read, name: FETCH_TOOL_RESULT_TOOL }])).toEqual(['report']);
  });

  test('says when the model sees the summary view: never when a tool of the catalog is called describe_tools', () => {
    const many = Array.from({ length: 3 }, (_, i) => ({ ...read, name: `read_${i}` }));
    expect(clearCatalog(many, { ...rules, toolDisclosure: { maxTools: 2 } }).disclosedOnDemand).toBe(true);
    expect(clearCatalog(many, { ...rules, toolDisclosure: { maxTools: 3 } }).disclosedOnDemand).toBe(false);
    expect(
      clearCatalog(many, { ...rules, allowedTools: ['read_0', 'read_1'], toolDisclosure: { maxTools: 2 } }),
    ).toEqual(expect.objectContaining({ disclosedOnDemand: false }));
    expect(names([...many, { ...read, name: DESCRIBE_TOOLS_TOOL }], { toolDisclosure: { maxTools: 2 } })).toContain(
      DESCRIBE_TOOLS_TOOL,
    );
  });
});
