// Network details (getNetworkDetails) as the data service answers them, derived from the same world
// as its validators listing (validators.ts) and the P-Chain's supply (primary.ts): the totals are the
// sums over the primary network's validations that listing says are active at the time asked (their
// stake, rewards, delegations running), so a lake that lands both can check one against the other.
import { PRIMARY_NETWORK_ID } from './subnets.js';
import { iterate } from './listing.js';
import { networkParam } from './params.js';
import { primaryWorld } from './primary.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import { stakingNetwork } from './staking.js';
import { validatorWorld, type ActiveValidator } from './validators.js';

/** Digits of the staking ratio after the point (the service sends it as decimal text). */
const RATIO_DIGITS = 6;

export interface NetworkDetails {
  validatorDetails: {
    validatorCount: number;
    totalAmountStaked: string;
    estimatedAnnualStakingReward: string;
    stakingDistributionByVersion: Array<{ version: string; amountStaked: string; validatorCount: number }>;
    stakingRatio: string;
  };
  delegatorDetails: { delegatorCount: number; totalAmountStaked: string };
}

function ratio(n: bigint, d: bigint): string {
  const scaled = (n * 10n ** BigInt(RATIO_DIGITS)) / d;
  const s = scaled.toString().padStart(RATIO_DIGITS + 1, '0');
  return `${s.slice(0, -RATIO_DIGITS)}.${s.slice(-RATIO_DIGITS)}`;
}

/** The primary network's staking at time t: its active validators and delegators, summed. */
function details(ctx: RouteContext, t: number): NetworkDetails {
  const network = networkParam(ctx.params[0]!);
  const active = [...iterate(validatorWorld(ctx.world).listValidators(network, { validationStatus: 'active', subnetId: PRIMARY_NETWORK_ID }, t))] as ActiveValidator[];
  let staked = 0n;
  let rewards = 0n;
  let delegated = 0n;
  let delegatorCount = 0;
  const byVersion = new Map<string, { amountStaked: bigint; validatorCount: number }>();
  for (const v of active) {
    staked += BigInt(v.amountStaked);
    rewards += BigInt(v.potentialRewards.validationRewardAmount) + BigInt(v.potentialRewards.delegationRewardAmount);
    delegated += BigInt(v.amountDelegated ?? 0);
    delegatorCount += v.delegatorCount;
    const version = v.avalancheGoVersion ?? 'unknown';
    const s = byVersion.get(version) ?? { amountStaked: 0n, validatorCount: 0 };
    byVersion.set(version, { amountStaked: s.amountStaked + BigInt(v.amountStaked), validatorCount: s.validatorCount + 1 });
  }
  const p = primaryWorld(ctx.world.seed);
  const net = stakingNetwork(network);
  const supply = BigInt(p.block(net, Math.max(0, p.headAt(net, t))).currentSupply!);
  return {
    validatorDetails: {
      validatorCount: active.length,
      totalAmountStaked: staked.toString(),
      estimatedAnnualStakingReward: rewards.toString(),
      stakingDistributionByVersion: [...byVersion].sort(([a], [b]) => (a < b ? -1 : 1)).map(([version, s]) => ({ version, amountStaked: s.amountStaked.toString(), validatorCount: s.validatorCount })),
      stakingRatio: ratio(staked + delegated, supply),
    },
    delegatorDetails: { delegatorCount, totalAmountStaked: delegated.toString() },
  };
}

export const NETWORK_DETAIL_ROUTES: RouteTable = [
  { pattern: ['v1', 'networks', null], route: { name: 'networkDetails', service: 'data', weight: WEIGHTS.networkDetails, handle: (ctx) => details(ctx, ctx.world.now) } },
];
