import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { provisionPythonTool } from '../../local/tools/python-tools.js';
import { shopEvents } from '../fixtures/shop-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// A Python client generated from docs/openapi.json by openapi-python-client (pinned, installed into the tool cache
// by `npm run provision`), as a Python user would make one: the request bodies and enums come out named (QueryRequest,
// DatePreset.LAST_7_DAYS, never VALUE_0), a row's metrics are typed attributes, and the client calls the server and
// reads its answer.

let api: TestApi;
let token: string;
const work = mkdtempSync(join(tmpdir(), 'python-client-'));
const out = join(work, 'analytics_client');

beforeAll(async () => {
  const { bin } = provisionPythonTool('openapi-python-client');
  writeFileSync(join(work, 'config.yaml'), 'post_hooks: []\n');
  execFileSync(
    bin,
    [
      'generate',
      '--path',
      'docs/openapi.json',
      '--meta',
      'none',
      '--output-path',
      out,
      '--config',
      join(work, 'config.yaml'),
    ],
    { stdio: 'pipe' },
  );
  api = await startTestApi();
  expect((await api.importEvents(shopEvents)).rejected).toEqual([]);
  token = (await api.createKey({ domains: ['shop.test'] })).token;
}, 300_000);
afterAll(async () => {
  await api?.close();
  rmSync(work, { recursive: true, force: true });
});

const model = (name: string) => readFileSync(join(out, 'models', `${name}.py`), 'utf8');

it('names the request bodies and the enums, presets by what they mean', () => {
  for (const [file, name] of [
    ['query_request', 'QueryRequest'],
    ['journeys_list_request', 'JourneysListRequest'],
    ['journeys_timeline_request', 'JourneysTimelineRequest'],
    ['visitor_request', 'VisitorRequest'],
    ['annotation_create_request', 'AnnotationCreateRequest'],
  ])
    expect(model(file!)).toContain(`class ${name}:`);
  const presets = model('date_preset');
  for (const line of [
    'LAST_7_DAYS = "7d"',
    'LAST_14_DAYS = "14d"',
    'LAST_30_DAYS = "30d"',
    'LAST_90_DAYS = "90d"',
    'LAST_12_MONTHS = "12mo"',
    'ALL_TIME = "all"',
  ])
    expect(presets).toContain(line);
  expect(presets).not.toMatch(/VALUE_\d/);
  // Every metric a typed attribute of a row's metrics; no open map.
  const metrics = model('query_row_metrics');
  for (const name of ['visitors', 'pageviews', 'bounce_rate', 'revenue', 'conversion_rate'])
    expect(metrics).toMatch(new RegExp(`^    ${name}: float \\| Unset`, 'm'));
  expect(metrics).not.toContain('additional_properties');
});

it('calls /v1/query with the generated types and reads the rows as typed', async () => {
  const python = join(dirname(provisionPythonTool('openapi-python-client').bin), 'python');
  const script = `
import json, os, sys
sys.path.insert(0, os.environ['CLIENT_PARENT'])
from analytics_client import AuthenticatedClient
from analytics_client.api.query import query
from analytics_client.models import DatePreset, Dimension, Metric, QueryRequest
client = AuthenticatedClient(base_url=os.environ['BASE_URL'], token=os.environ['TOKEN'])
answer = query.sync(client=client, body=QueryRequest(
    domain='shop.test', metrics=[Metric.VISITORS, Metric.PAGEVIEWS], dimensions=[Dimension.PAGE],
    date_range=DatePreset.ALL_TIME))
print(json.dumps([[r.dimensions.page, r.metrics.visitors, r.metrics.pageviews] for r in answer.data]))
`;
  // Asynchronously: the server answering it runs in this process.
  const { stdout: printed } = await promisify(execFile)(python, ['-c', script], {
    env: { ...process.env, CLIENT_PARENT: work, BASE_URL: api.url, TOKEN: token },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const direct = await api.request('POST', '/v1/query', {
    token,
    body: { domain: 'shop.test', metrics: ['visitors', 'pageviews'], dimensions: ['page'], date_range: 'all' },
  });
  expect(direct.status).toBe(200);
  expect(direct.body.data.length).toBeGreaterThan(2);
  expect(JSON.parse(printed)).toEqual(
    direct.body.data.map((r: any) => [r.dimensions.page, r.metrics.visitors, r.metrics.pageviews]),
  );
});
