import type { PrismaClient } from '@pmatch/db';

/** A node of PostgreSQL's JSON plan (`EXPLAIN (FORMAT JSON)`). */
export type PlanNode = Record<string, unknown>;

/**
 * The services prepare each statement once per connection: PostgreSQL plans it for the values
 * given at first and may keep a generic plan, made without them, after five executions. A test of
 * a statement's plan checks both.
 */
export const PLAN_CACHE_MODES = ['force_custom_plan', 'force_generic_plan'] as const;
export type PlanCacheMode = (typeof PLAN_CACHE_MODES)[number];

/**
 * How PostgreSQL plans `text` prepared, under `mode`, for `values` (SQL literals written into
 * EXECUTE's text, which takes no bind parameters), after `SET LOCAL` of each of `settings` (such
 * as `enable_seqscan = off`). EXPLAIN without ANALYZE runs nothing, a DELETE included.
 */
export async function preparedPlan(prisma: PrismaClient, text: string, values: string, mode: PlanCacheMode, settings: string[] = []): Promise<PlanNode> {
  return prisma.$transaction(async (tx) => {
    for (const setting of [...settings, `plan_cache_mode = ${mode}`]) await tx.$executeRawUnsafe(`SET LOCAL ${setting}`);
    await tx.$executeRawUnsafe(`PREPARE plan_check AS ${text}`);
    const rows = await tx.$queryRawUnsafe<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(`EXPLAIN (FORMAT JSON) EXECUTE plan_check(${values})`);
    await tx.$executeRawUnsafe('DEALLOCATE plan_check');
    return rows[0]!['QUERY PLAN'][0]!.Plan;
  });
}

/** Every node of a JSON plan, depth first. */
export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...((node.Plans as PlanNode[] | undefined) ?? []).flatMap(planNodes)];
}
