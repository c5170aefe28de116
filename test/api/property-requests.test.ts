import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { responseSchemas } from '../../shared/http/response-schemas.js';
import { queryFilterFields } from '../../shared/requests/query.js';
import { journeyFilterFields } from '../../shared/requests/journeys.js';
import type { KeyedRouteKey } from '../../shared/routes.js';
import { shopEvents } from '../fixtures/shop-events.js';
import { expectErrorResponse } from '../support/http-assertions.js';
import {
  anyJson,
  objectsWithFields,
  rawBodies,
  sloppyFilters,
  validQueryBody,
  validTimelineBody,
  validVisitorBody,
  validVisitorListBody,
  withWildFields,
} from '../support/request-arbitraries.js';
import { rotatingToken } from '../support/rotating-token.js';
import { startTestApi, type TestApi, type TestResponse } from '../support/test-api.js';

// Whatever a client POSTs to /v1/query and the journeys endpoints, the answer is a 200 whose body has the
// documented shape (shared/http/response-schemas.ts), or a 4xx with the error shape {error, message(, details)}:
// never a 5xx. Bodies come in four kinds: near-valid (valid bodies, the same with one or two fields made wild,
// and bodies with sloppy filter lists), any JSON value, objects of real and made-up field names with any
// values, and raw text that may not be JSON. Seeds are fixed: a failure replays exactly, and fast-check prints
// the seed and the shrunk body.

const SEED = 42;
const DOMAIN = 'shop.test';
const VISITORS = ['v1', 'v3', 'v4', 'v5', 'v9', 'nobody'];
const ANSWERS = new Set([200, 400, 403, 404]);

let api: TestApi;
let nextToken: () => Promise<string>;

beforeAll(async () => {
  api = await startTestApi();
  expect((await api.importEvents(shopEvents)).rejected).toEqual([]);
  nextToken = rotatingToken(api, { domains: [DOMAIN] });
});
afterAll(() => api?.close());

interface Endpoint {
  path: string;
  route: KeyedRouteKey;
  fields: readonly string[];
  valid: fc.Arbitrary<Record<string, unknown>>;
  filterFields?: readonly string[];
}

const listFields = [
  'domain',
  'date_range',
  'filters',
  'pageviews_gt',
  'pageviews_lt',
  'sessions_gt',
  'sessions_lt',
  'revenue_gt',
  'revenue_lt',
  'has_revenue',
  'first_purchase',
  'sort_by',
  'sort_order',
  'limit',
  'offset',
  'timezone',
  'is_dev',
];

const endpoints: Endpoint[] = [
  {
    path: '/v1/query',
    route: 'query',
    fields: [
      'domain',
      'metrics',
      'date_range',
      'dimensions',
      'filters',
      'sort',
      'timezone',
      'limit',
      'offset',
      'include_revenue',
    ],
    valid: fc.oneof(validQueryBody(), validQueryBody(DOMAIN)),
    filterFields: queryFilterFields,
  },
  {
    path: '/v1/journeys/list',
    route: 'journeysList',
    fields: listFields,
    valid: validVisitorListBody(DOMAIN),
    filterFields: journeyFilterFields,
  },
  {
    path: '/v1/journeys/timeline',
    route: 'journeysTimeline',
    fields: ['domain', 'visitor_id', 'date_range', 'limit', 'offset', 'timezone', 'is_dev', 'include_auto_events'],
    valid: validTimelineBody(DOMAIN, VISITORS),
  },
  {
    path: '/v1/journeys/stats',
    route: 'journeysStats',
    fields: ['domain', 'visitor_id', 'is_dev', 'timezone'],
    valid: validVisitorBody(DOMAIN, VISITORS),
  },
  {
    path: '/v1/journeys/activity',
    route: 'journeysActivity',
    fields: ['domain', 'visitor_id', 'is_dev', 'timezone'],
    valid: validVisitorBody(DOMAIN, VISITORS),
  },
];

function nearValid(endpoint: Endpoint): fc.Arbitrary<Record<string, unknown>> {
  const kinds = [
    { weight: 2, arbitrary: endpoint.valid },
    { weight: 3, arbitrary: withWildFields(endpoint.valid, endpoint.fields) },
  ];
  if (endpoint.filterFields) {
    const sloppy = fc
      .tuple(endpoint.valid, sloppyFilters(endpoint.filterFields))
      .map(([body, filters]) => ({ ...body, filters }));
    kinds.push({ weight: 1, arbitrary: sloppy });
  }
  return fc.oneof(...kinds);
}

/** Sends one body and checks the answer against the contract; returns the status for the statistics. */
async function expectContractAnswer(
  endpoint: Endpoint,
  payload: { body?: unknown; rawBody?: string },
): Promise<number> {
  const res: TestResponse = await api.request('POST', endpoint.path, { token: await nextToken(), ...payload });
  const sent = payload.rawBody ?? JSON.stringify(payload.body) ?? '';
  const context = `${endpoint.path} ${sent.slice(0, 400)} -> ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
  expect(ANSWERS.has(res.status), context).toBe(true);
  expect(res.headers.get('x-request-id'), context).toBeTruthy();
  if (res.status === 200) {
    expect(responseSchemas[endpoint.route].safeParse(res.body).error?.issues ?? [], context).toEqual([]);
  } else {
    expectErrorResponse(res, res.status);
  }
  return res.status;
}

const runs = { nearValid: 200, anyJson: 50, fieldObjects: 50, raw: 25 };

describe.each(endpoints)('POST $path never answers 5xx', (endpoint) => {
  it(`near-valid bodies (${runs.nearValid} runs): a 200 of the documented shape, or a 4xx error`, async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(nearValid(endpoint), async (body) => {
        const status = await expectContractAnswer(endpoint, { body });
        seen.set(status, (seen.get(status) ?? 0) + 1);
      }),
      { seed: SEED, numRuns: runs.nearValid },
    );
    // The generator must reach the handlers' success paths and the engine, not only the validators.
    expect(seen.get(200) ?? 0, JSON.stringify([...seen])).toBeGreaterThan(runs.nearValid / 10);
    expect(seen.get(400) ?? 0, JSON.stringify([...seen])).toBeGreaterThan(runs.nearValid / 5);
  });

  it(`any JSON value, or any JS value as JSON.stringify sends it (${runs.anyJson} runs)`, async () => {
    const anyValue = fc.oneof(anyJson, fc.object({ maxDepth: 2 }), fc.anything({ maxDepth: 1 }));
    await fc.assert(
      fc.asyncProperty(anyValue, async (body) => {
        await expectContractAnswer(endpoint, { body });
      }),
      { seed: SEED, numRuns: runs.anyJson },
    );
  });

  it(`objects of real and made-up field names with any values (${runs.fieldObjects} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(objectsWithFields(endpoint.fields), async (body) => {
        await expectContractAnswer(endpoint, { body });
      }),
      { seed: SEED, numRuns: runs.fieldObjects },
    );
  });

  it(`raw text that may not be JSON (${runs.raw} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(rawBodies, async (raw) => {
        await expectContractAnswer(endpoint, { rawBody: raw });
      }),
      { seed: SEED, numRuns: runs.raw },
    );
  });
});
