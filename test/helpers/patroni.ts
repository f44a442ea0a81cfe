// A Patroni-managed PostgreSQL 15 pair behind HAProxy (dev/patroni.ts: etcd,
// two Patroni nodes, HAProxy routing to the leader, all as the postgres OS
// user in a folder and on ports of their own), stopped when the test ends.
// Where a program is missing the tests skip, saying which.
import { haBinaries, startHaCluster, type HaCluster } from '../../dev/patroni.ts'

export { HA_SETTINGS, haBinaries, type HaCluster, type KilledLeader } from '../../dev/patroni.ts'

interface TestContext {
  teardown(fn: () => unknown): void
}

/** Why the pair cannot run here, or undefined when it can. */
export function patroniMissing(): string | undefined {
  const found = haBinaries()
  return 'missing' in found ? found.missing : undefined
}

export async function startPatroni(t: TestContext): Promise<HaCluster> {
  const found = haBinaries()
  if ('missing' in found) throw new Error(found.missing)
  const cluster = await startHaCluster(found)
  t.teardown(() => cluster.stop())
  return cluster
}
