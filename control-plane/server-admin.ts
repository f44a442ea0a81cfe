// The operator's operations on the database servers (`baseplane servers ...`,
// admin-api/servers.ts): adding one, listing them with what each says of
// itself, budgets, draining, removing. What they check and write is
// servers.ts's, which takes the catalogue's pool.
import type { ControlPlane } from './control-plane.ts'
import { addServer, listServers, removeServer, serverState, setServerBudget, setServerDraining, type AddServerInput, type DatabaseServer, type ServerState } from './servers.ts'

/** Registers another PostgreSQL server for new projects; returns it as listed. */
export async function addDatabaseServer(controlPlane: ControlPlane, input: AddServerInput): Promise<DatabaseServer> {
  const id = await addServer(controlPlane.catalogue, input)
  return (await listDatabaseServers(controlPlane)).find((server) => server.id === id)!
}

export async function listDatabaseServers(controlPlane: ControlPlane): Promise<DatabaseServer[]> {
  return listServers(controlPlane.catalogue, controlPlane.defaultServerUrl, controlPlane.defaultServerBudget)
}

/** Every server with what it says of itself now (up or down, connections in use), asked at once. */
export async function databaseServerStates(controlPlane: ControlPlane): Promise<Array<DatabaseServer & ServerState>> {
  const servers = await listDatabaseServers(controlPlane)
  const states = await Promise.all(servers.map((server) => serverState(server.url)))
  return servers.map((server, i) => ({ ...server, ...states[i]! }))
}

export async function setDatabaseServerBudget(controlPlane: ControlPlane, id: string, connections: unknown): Promise<DatabaseServer> {
  await setServerBudget(controlPlane.catalogue, id, connections)
  return (await listDatabaseServers(controlPlane)).find((server) => server.id === id)!
}

export async function setDatabaseServerDraining(controlPlane: ControlPlane, id: string, draining: boolean): Promise<DatabaseServer> {
  await setServerDraining(controlPlane.catalogue, id, draining)
  return (await listDatabaseServers(controlPlane)).find((server) => server.id === id)!
}

export async function removeDatabaseServer(controlPlane: ControlPlane, id: string): Promise<void> {
  await removeServer(controlPlane.catalogue, id)
}
