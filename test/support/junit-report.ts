import { execFileSync } from 'node:child_process';

/** One `<testcase>` of a JUnit report, as a CI reads it. */
export interface JUnitCase {
  classname: string;
  name: string;
  failure?: { message: string; type: string; text: string };
  error?: { message: string; type: string; text: string };
}

/** One `<testsuite>`, with the counts it declares. */
export interface JUnitSuite {
  name: string;
  tests: number;
  failures: number;
  errors: number;
  cases: JUnitCase[];
}

/** Reads a `<testsuites>` document into its suites and cases. */
const READER = `
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == 'testsuites', root.tag
def problem(node, tag):
    found = node.find(tag)
    return None if found is None else {'message': found.get('message', ''), 'type': found.get('type', ''), 'text': found.text or ''}
suites = []
for suite in root.findall('testsuite'):
    cases = []
    for case in suite.findall('testcase'):
        item = {'classname': case.get('classname'), 'name': case.get('name')}
        for tag in ('failure', 'error'):
            found = problem(case, tag)
            if found is not None: item[tag] = found
        cases.append(item)
    suites.append({'name': suite.get('name'), 'tests': int(suite.get('tests')), 'failures': int(suite.get('failures')),
                   'errors': int(suite.get('errors')), 'cases': cases})
print(json.dumps(suites))
`;

/**
 * Parses a JUnit XML file with an XML parser that is not ours (Python's ElementTree, on expat): the file must be
 * well-formed XML for it to read at all, as for a CI server.
 */
export function readJUnitReport(path: string): JUnitSuite[] {
  return JSON.parse(execFileSync('python3', ['-c', READER, path], { encoding: 'utf8' })) as JUnitSuite[];
}
