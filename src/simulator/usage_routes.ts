// The routes of a key's own usage (getApiUsageMetrics, getApiLogs): parameter checks as the data
// service makes them, answered from what the simulator served the key (usage.ts).
import { badRequest, HttpError } from './errors.js';
import { enumParam, intParam, page, single } from './params.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import { DAY, USAGE_GROUP_BY, USAGE_INTERVALS, type Caller, type UsageFilter, type UsageMetrics } from './usage.js';

/** Both routes report on the key a request carries: without one there is nothing to report on. */
function callerOf(ctx: RouteContext): Caller {
  if (!ctx.caller) throw new HttpError(401, 'An API key is required (x-glacier-api-key)');
  return ctx.caller;
}

const dayOf = (t: number) => t - (t % DAY);

function usageFilter(ctx: RouteContext, caller: Caller): UsageFilter {
  const q = ctx.query;
  const orgId = single(q, 'orgId');
  if (orgId !== undefined && orgId !== caller.orgId) throw new HttpError(403, `the API key does not belong to organization ${orgId}`);
  const start = intParam(q, 'startTimestamp', 0);
  const end = intParam(q, 'endTimestamp', 0);
  if (start !== undefined && end !== undefined && dayOf(start) > dayOf(end)) throw badRequest('startTimestamp must not be after endTimestamp');
  const code = single(q, 'responseCode');
  if (code !== undefined && !/^[1-5][0-9]{2}$/.test(code)) throw badRequest(`responseCode must be an HTTP status code, got "${code}"`);
  const f: UsageFilter = {};
  if (start !== undefined) f.startDay = dayOf(start);
  if (end !== undefined) f.endDay = dayOf(end);
  if (code !== undefined) f.responseCode = Number(code);
  const requestType = enumParam(q, 'requestType', ['data', 'rpc'] as const);
  if (requestType !== undefined) f.requestType = requestType;
  for (const name of ['chainId', 'apiKeyId', 'requestPath'] as const) {
    const v = single(q, name);
    if (v !== undefined) f[name] = v;
  }
  return f;
}

function apiUsageMetrics(ctx: RouteContext): UsageMetrics {
  const caller = callerOf(ctx);
  const f = usageFilter(ctx, caller);
  const interval = enumParam(ctx.query, 'timeInterval', USAGE_INTERVALS) ?? 'daily';
  const groupBy = enumParam(ctx.query, 'groupBy', USAGE_GROUP_BY);
  return ctx.usage.metrics(caller, f, interval, groupBy);
}

function apiLogs(ctx: RouteContext): object {
  const caller = callerOf(ctx);
  const f = usageFilter(ctx, caller);
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  // A token is the key's own: another key's query never matches it.
  const key = JSON.stringify(['apiLogs', caller.apiKeyId, f]);
  const token = single(ctx.query, 'pageToken');
  const state = token === undefined ? undefined : ctx.tokens.redeem(token, key);
  // Frozen at the requests made before the first page: later pages do not shift as the key's own
  // requests (these included) are logged.
  const upTo = state?.at ?? ctx.usage.countOf(caller);
  const { items, nextPageToken } = page(ctx.usage.logs(caller, f, upTo), state?.offset ?? 0, pageSize, (next) => ctx.tokens.issue(key, next, upTo));
  return { ...(nextPageToken !== undefined ? { nextPageToken } : {}), orgId: caller.orgId, logs: items };
}

export const USAGE_ROUTES: RouteTable = [
  { pattern: ['v1', 'apiUsageMetrics'], route: { name: 'apiUsageMetrics', service: 'data', weight: WEIGHTS.apiUsageMetrics, handle: apiUsageMetrics } },
  { pattern: ['v1', 'apiLogs'], route: { name: 'apiLogs', service: 'data', weight: WEIGHTS.apiLogs, handle: apiLogs } },
];
