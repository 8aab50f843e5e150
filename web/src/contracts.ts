/**
 * The pages' URL parameters and metric fields, as shared/contracts/player.json defines them
 * for both languages (server/pccstream/contracts.py reads the same file).
 */
import contract from '../../shared/contracts/player.json';

export type PageName = keyof typeof contract.pages;

/** `live.keep_ms` bound (shared/PROTOCOL.md): the player's `keep` and the session's parameter. */
export const MAX_LIVE_KEEP_MS: number = contract.limits.live_keep_ms_max;

/** `live.fec` bound (shared/PROTOCOL.md "Live over datagrams"): the player's `fec` and the session's parameter. */
export const MAX_LIVE_FEC: number = contract.limits.live_fec_max;

/** `live.fec=auto`: the most parity it sends is one per this many data fragments. */
export const AUTO_FEC_MAX_K: number = contract.limits.live_fec_auto_max;

/** The parameters a page reads (forwarded prefixes aside). */
export function pageParameters(page: PageName): ReadonlySet<string> {
  return new Set(contract.pages[page].parameters);
}

/** Prefixes of the parameters a page forwards as they are (the player's `cc.`, `test.`). */
export function forwardedPrefixes(page: PageName): readonly string[] {
  return contract.pages[page].forwarded_prefixes;
}

export type MetricsPage = keyof typeof contract.metrics;

export function metricFields(page: MetricsPage): readonly string[] {
  return contract.metrics[page];
}

export interface ContractVector {
  name: string;
  page: PageName;
  parameters: [string, string][];
  query: string;
  parsed?: Record<string, unknown>;
}

export const CONTRACT_VECTORS = contract.vectors as ContractVector[];
