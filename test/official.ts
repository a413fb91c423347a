// The official client's (@avalanche-sdk/chainkit, a dev dependency) response schemas, by the
// simulator's route names: what the client's own validators would say of a page the simulator
// serves. A route answered in production shape passes them; a missing field, a string where
// production sends a number or an unknown enum value fails them.
import * as components from '@avalanche-sdk/chainkit/models/components';
import * as operations from '@avalanche-sdk/chainkit/models/operations';
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { stringifyExact } from '../src/json.js';

interface Schema {
  safeParse(v: unknown): { success: boolean; error?: { issues: unknown[] } };
}
const modules = { components, operations } as unknown as Record<'components' | 'operations', Record<string, Schema>>;

/**
 * Route name -> the schema the client matches a 200 against (`module.Name`). The schema of a paged
 * call takes the body wrapped as `{ Result: body }`, the client's own envelope: `wrapped`.
 */
const OFFICIAL: Record<string, { schema: string; wrapped?: true }> = {
  transfers: { schema: 'operations.ListTransfersResponse', wrapped: true },
  internals: { schema: 'operations.ListInternalTransactionsResponse', wrapped: true },
  rewards: { schema: 'operations.ListHistoricalPrimaryNetworkRewardsResponse', wrapped: true },
  pendingRewards: { schema: 'operations.ListPendingPrimaryNetworkRewardsResponse', wrapped: true },
  delegators: { schema: 'operations.ListDelegatorsResponse', wrapped: true },
  metrics: { schema: 'operations.GetEvmChainMetricsResponse', wrapped: true },
  chains: { schema: 'components.DataListChainsResponse' },
  blocks: { schema: 'operations.GetLatestBlocksResponse', wrapped: true },
  block: { schema: 'components.GetEvmBlockResponse' },
  blockTransactions: { schema: 'components.ListNativeTransactionsResponse' },
  nativeBalance: { schema: 'components.GetNativeBalanceResponse' },
  erc20Balances: { schema: 'operations.ListErc20BalancesResponse', wrapped: true },
  contractMetadata: { schema: 'operations.GetContractMetadataResponse' },
  subnets: { schema: 'operations.ListSubnetsResponse', wrapped: true },
  addressChains: { schema: 'components.ChainAddressChainIdMapListResponse' },
  exportStart: { schema: 'components.OperationStatusResponse' },
  operation: { schema: 'components.OperationStatusResponse' },
  aggregateSignatures: { schema: 'components.SignatureAggregationResponse' },
  nativeTransactions: { schema: 'operations.ListNativeTransactionsResponse', wrapped: true },
  erc721Balances: { schema: 'operations.ListErc721BalancesResponse', wrapped: true },
  erc1155Balances: { schema: 'operations.ListErc1155BalancesResponse', wrapped: true },
  contractDeployments: { schema: 'operations.ListContractDeploymentsResponse', wrapped: true },
  icmMessages: { schema: 'operations.ListIcmMessagesResponse', wrapped: true },
  icmAddressMessages: { schema: 'components.ListIcmMessagesResponse' },
  avaxSupply: { schema: 'components.AvaxSupplyResponse' },
  icmTimeseries: { schema: 'components.ICMMetricsApiResponse' },
  validators: { schema: 'operations.ListValidatorsResponse', wrapped: true },
  l1Validators: { schema: 'operations.ListL1ValidatorsResponse', wrapped: true },
  stakingMetrics: { schema: 'operations.GetStakingMetricsResponse', wrapped: true },
  primaryTransactions: { schema: 'operations.ListLatestPrimaryNetworkTransactionsResponse', wrapped: true },
  primaryBlocks: { schema: 'operations.ListLatestPrimaryNetworkBlocksResponse', wrapped: true },
  primaryStaking: { schema: 'operations.ListActivePrimaryNetworkStakingTransactionsResponse', wrapped: true },
  primaryNodeBlocks: { schema: 'operations.ListPrimaryNetworkBlocksByNodeIdResponse', wrapped: true },
  // Not paged by the client: it matches the body itself.
  l1TotalMetrics: { schema: 'components.MetricsApiResponse' },
  l1ValidationMetrics: { schema: 'components.MetricsApiResponse' },
  l1NodeMetrics: { schema: 'components.MetricsApiResponse' },
  l1SubnetMetrics: { schema: 'components.MetricsApiResponse' },
  erc20Transactions: { schema: 'operations.ListErc20TransactionsResponse', wrapped: true },
  erc721Transactions: { schema: 'operations.ListErc721TransactionsResponse', wrapped: true },
  erc1155Transactions: { schema: 'operations.ListErc1155TransactionsResponse', wrapped: true },
  transactionDetails: { schema: 'operations.ListTransactionsResponse', wrapped: true },
  collectibleBalances: { schema: 'operations.ListCollectibleBalancesResponse', wrapped: true },
  // The operations' schemas are unions of the P-, X- and C-Chain shapes: the P-Chain's own is stricter.
  primaryBalances: { schema: 'components.ListPChainBalancesResponse' },
  primaryUtxos: { schema: 'components.ListPChainUtxosResponse' },
  // The usage series is one answer (not paged by the client); the logs are paged.
  apiUsageMetrics: { schema: 'components.UsageMetricsResponseDTO' },
  apiLogs: { schema: 'operations.GetApiLogsResponse', wrapped: true },
  // issue 40, the primary network and the X-Chain. The balances and UTXOs routes answer each chain in
  // its own shape: the X-Chain's are checked against its own schemas under these names.
  networkDetails: { schema: 'components.GetNetworkDetailsResponse' },
  xChainBalances: { schema: 'components.ListXChainBalancesResponse' },
  xChainUtxos: { schema: 'components.ListUtxosResponse' },
  // The C-Chain's answer its atomic memory in their own shapes (its UTXOs the X-Chain's Utxo).
  cChainBalances: { schema: 'components.ListCChainAtomicBalancesResponse' },
  cChainUtxos: { schema: 'components.ListUtxosResponse' },
  assetTransactions: { schema: 'operations.ListAssetTransactionsResponse', wrapped: true },
  xVertices: { schema: 'operations.ListLatestXChainVerticesResponse', wrapped: true },
  xVerticesByHeight: { schema: 'operations.GetVertexByHeightResponse', wrapped: true },
  // Issue 40, EVM and metrics side.
  metricsChains: { schema: 'operations.ListChainsResponse', wrapped: true },
  rollingWindowMetrics: { schema: 'components.RollingWindowMetricsApiResponse' },
  icmSummary: { schema: 'components.ICMRollingWindowMetricsApiResponse' },
  validatorAddresses: { schema: 'operations.GetValidatorsByDateRangeResponse', wrapped: true },
  btcbBridgers: { schema: 'operations.GetAddressesByBtcbBridgedResponse', wrapped: true },
  addressEvmChains: { schema: 'components.ListAddressChainsResponse' },
  nftTokens: { schema: 'operations.ListTokensResponse', wrapped: true },
  lastActivity: { schema: 'components.LastActivityTimestamp' },
  subnetRpcUsage: { schema: 'components.SubnetRpcUsageMetricsResponseDTO' },
};

/**
 * Routes with no schema in the client: `/v1/avg_tps/{chainId}` is not in the published OpenAPI
 * (docs/services.md, Metrics service).
 */
export const UNPUBLISHED = new Set(['avgTps']);

/**
 * Every page of a listing the simulator at `base` serves at `path` (each answered 200), its bodies
 * in order; `route`: each body checked against the official client's schema of that route too.
 */
export async function listingPages(base: string, path: string, route?: string): Promise<any[]> {
  const out: any[] = [];
  let token: string | undefined;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const r = await fetch(base + (token ? `${path}${sep}pageToken=${encodeURIComponent(token)}` : path));
    expect(r.status).toBe(200);
    const body = (await r.json()) as any;
    if (route) expect(route in PUBLISHED ? publishedProblems(route, body) : officialProblems(route, body)).toBe('');
    out.push(body);
    token = body.nextPageToken;
  } while (token);
  return out;
}

/** The client's verdict on one answer of `route` ('' when it accepts it), as the wire carries it. */
export function officialProblems(route: string, body: unknown): string {
  const o = OFFICIAL[route];
  if (!o) return `no official schema is known for route ${route}`;
  const [module, name] = o.schema.split('.') as ['components' | 'operations', string];
  const schema = modules[module][`${name}$inboundSchema`];
  if (!schema) return `the client has no ${o.schema}$inboundSchema`;
  const wire = JSON.parse(stringifyExact(body)!);
  const r = schema.safeParse(o.wrapped ? { Result: wire } : wire);
  return r.success ? '' : `${route}: ${JSON.stringify(r.error?.issues).slice(0, 2000)}`;
}

/**
 * Schemas of the published OpenAPI document for routes the official client lacks (issue 40: an
 * address's transactions v2, the primary network's RPC usage), copied into the repository from
 * the document (test/fixtures/openapi/glacier-issue40.json says whence): route -> component.
 */
const PUBLISHED: Record<string, string> = {
  transactionDetailsV2: 'ListTransactionDetailsResponseV2',
  primaryRpcUsage: 'PrimaryNetworkRpcUsageMetricsResponseDTO',
};
const GLACIER = JSON.parse(readFileSync(new URL('./fixtures/openapi/glacier-issue40.json', import.meta.url), 'utf8')) as { components: { schemas: Record<string, JsonSchema> } };

interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  required?: string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  allOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  minimum?: number;
}

/** What a value breaks of a schema, by path: the subset of JSON Schema the document's components use. */
function violations(s: JsonSchema, v: unknown, at: string): string[] {
  if (s.$ref) return violations(GLACIER.components.schemas[s.$ref.replace('#/components/schemas/', '')]!, v, at);
  const out: string[] = [];
  for (const sub of s.allOf ?? []) out.push(...violations(sub, v, at));
  if (s.oneOf && s.oneOf.filter((sub) => violations(sub, v, at).length === 0).length !== 1) out.push(`${at}: matches not exactly one of oneOf`);
  if (s.anyOf && !s.anyOf.some((sub) => violations(sub, v, at).length === 0)) out.push(`${at}: matches none of anyOf`);
  const types = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
  if (v === null) return types.length === 0 || types.includes('null') ? out : [...out, `${at}: null`];
  const kind = Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;
  if (types.length > 0 && !types.some((t) => t === kind || (t === 'number' && kind === 'integer'))) return [...out, `${at}: ${kind}, not ${types.join(' or ')}`];
  if (s.enum && !s.enum.includes(v)) out.push(`${at}: ${JSON.stringify(v)} not in ${JSON.stringify(s.enum)}`);
  if (s.minimum !== undefined && typeof v === 'number' && v < s.minimum) out.push(`${at}: below ${s.minimum}`);
  if (Array.isArray(v) && s.items) v.forEach((x, i) => out.push(...violations(s.items!, x, `${at}[${i}]`)));
  if (kind === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of s.required ?? []) if (!(k in o)) out.push(`${at}.${k}: missing`);
    for (const [k, sub] of Object.entries(s.properties ?? {})) if (k in o) out.push(...violations(sub, o[k], `${at}.${k}`));
  }
  return out;
}

/** The published document's verdict on one answer of a route the client lacks ('' when it conforms). */
export function publishedProblems(route: string, body: unknown): string {
  const name = PUBLISHED[route];
  if (!name) return `no published schema is copied for route ${route}`;
  const wire = JSON.parse(stringifyExact(body)!);
  return violations({ $ref: `#/components/schemas/${name}` }, wire, '$').slice(0, 20).join('; ');
}
