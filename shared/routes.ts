// The one route table. The local server and the CDK stack both read it, so a route cannot exist in one and
// not the other. `handler` is the module under functions/ that exports `handler`.

export type Scope = 'analytics:read' | 'analytics:write';
export type HttpMethod = 'GET' | 'POST' | 'DELETE' | 'OPTIONS';

export interface Route {
  /** Stable name: the Lambda's logical id and the log's `route` key. */
  readonly name: string;
  readonly method: HttpMethod;
  /** API Gateway route path; `{param}` segments are path parameters. */
  readonly path: string;
  readonly handler: string;
  /** `null` for the public routes: the collector, which sites' visitors call without a key. */
  readonly scope: Scope | null;
  /**
   * Which backing services the function touches; the stack grants exactly these. `annotations` is the annotations
   * table, which holds the goals and the shared links too; `credentials` is writing keys (every function reads them);
   * `events` is writing collected events to the delivery stream.
   */
  readonly uses: readonly ('analytics' | 'annotations' | 'credentials' | 'events')[];
}

const read: Scope = 'analytics:read';
const write: Scope = 'analytics:write';

export const routes = {
  journeysList: {
    name: 'JourneysList',
    method: 'POST',
    path: '/v1/journeys/list',
    handler: 'journeys-list',
    scope: read,
    uses: ['analytics'],
  },
  journeysTimeline: {
    name: 'JourneysTimeline',
    method: 'POST',
    path: '/v1/journeys/timeline',
    handler: 'journeys-timeline',
    scope: read,
    uses: ['analytics'],
  },
  journeysStats: {
    name: 'JourneysStats',
    method: 'POST',
    path: '/v1/journeys/stats',
    handler: 'journeys-stats',
    scope: read,
    uses: ['analytics'],
  },
  journeysActivity: {
    name: 'JourneysActivity',
    method: 'POST',
    path: '/v1/journeys/activity',
    handler: 'journeys-activity',
    scope: read,
    uses: ['analytics'],
  },
  annotationsList: {
    name: 'AnnotationsList',
    method: 'GET',
    path: '/v1/annotations',
    handler: 'annotations-list',
    scope: read,
    uses: ['annotations'],
  },
  annotationsCreate: {
    name: 'AnnotationsCreate',
    method: 'POST',
    path: '/v1/annotations',
    handler: 'annotations-create',
    scope: write,
    uses: ['annotations'],
  },
  annotationsDelete: {
    name: 'AnnotationsDelete',
    method: 'DELETE',
    path: '/v1/annotations/{id}',
    handler: 'annotations-delete',
    scope: write,
    uses: ['annotations'],
  },
  goalsList: {
    name: 'GoalsList',
    method: 'GET',
    path: '/v1/goals',
    handler: 'goals-list',
    scope: read,
    uses: ['annotations'],
  },
  goalsCreate: {
    name: 'GoalsCreate',
    method: 'POST',
    path: '/v1/goals',
    handler: 'goals-create',
    scope: write,
    uses: ['annotations'],
  },
  goalsDelete: {
    name: 'GoalsDelete',
    method: 'DELETE',
    path: '/v1/goals/{id}',
    handler: 'goals-delete',
    scope: write,
    uses: ['annotations'],
  },
  sharedLinksList: {
    name: 'SharedLinksList',
    method: 'GET',
    path: '/v1/shared-links',
    handler: 'shared-links-list',
    scope: write,
    uses: ['annotations'],
  },
  sharedLinksCreate: {
    name: 'SharedLinksCreate',
    method: 'POST',
    path: '/v1/shared-links',
    handler: 'shared-links-create',
    scope: write,
    uses: ['annotations', 'credentials'],
  },
  sharedLinksDelete: {
    name: 'SharedLinksDelete',
    method: 'DELETE',
    path: '/v1/shared-links/{id}',
    handler: 'shared-links-delete',
    scope: write,
    uses: ['annotations', 'credentials'],
  },
  collectEvent: {
    name: 'CollectEvent',
    method: 'POST',
    path: '/api/event',
    handler: 'event-collect',
    scope: null,
    uses: ['events'],
  },
  collectEventPreflight: {
    name: 'CollectEventPreflight',
    method: 'OPTIONS',
    path: '/api/event',
    handler: 'event-collect-preflight',
    scope: null,
    uses: [],
  },
  eventsList: {
    name: 'EventsList',
    method: 'GET',
    path: '/v1/events',
    handler: 'events-list',
    scope: read,
    uses: ['analytics'],
  },
  eventProperties: {
    name: 'EventProperties',
    method: 'GET',
    path: '/v1/events/{name}/properties',
    handler: 'event-properties',
    scope: read,
    uses: ['analytics'],
  },
  eventPropertyValues: {
    name: 'EventPropertyValues',
    method: 'GET',
    path: '/v1/events/{name}/properties/{key}',
    handler: 'event-property-values',
    scope: read,
    uses: ['analytics'],
  },
  query: { name: 'Query', method: 'POST', path: '/v1/query', handler: 'query', scope: read, uses: ['analytics'] },
  queryBatch: {
    name: 'QueryBatch',
    method: 'POST',
    path: '/v1/query/batch',
    handler: 'query-batch',
    scope: read,
    uses: ['analytics'],
  },
} as const satisfies Record<string, Route>;

export type RouteKey = keyof typeof routes;
/** The routes a client calls with a key: every route but the public collector. */
export type KeyedRouteKey = Exclude<RouteKey, 'collectEvent' | 'collectEventPreflight'>;

export const routeList: readonly Route[] = Object.values(routes);
