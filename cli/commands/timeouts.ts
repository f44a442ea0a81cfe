// `baseplane projects timeouts ...`: the API roles' statement timeouts and the
// idle-in-transaction timeout of a project (control-plane/role-timeouts.ts).
import { formatTimeout, getRoleTimeouts, readTimeout, setRoleTimeouts, type RoleTimeoutsChange, type RoleTimeoutsView, type TimeoutField } from '../../control-plane/role-timeouts.ts'
import { refusedValue, stringOption, type Command } from '../command.ts'

const FLAGS: Record<string, TimeoutField> = {
  anon: 'anon',
  authenticated: 'authenticated',
  'service-role': 'service_role',
  'idle-in-transaction': 'idle_in_transaction',
}

const USAGE = 'projects timeouts REF [--anon 3s] [--authenticated 8s] [--service-role 60s] [--idle-in-transaction 10s] [--reset]'

const show = (view: RoleTimeoutsView) => {
  const line = (label: string, field: TimeoutField) =>
    `${label.padEnd(28)}${formatTimeout(view[field])}${view.custom.includes(field) ? '' : ' (default)'}`
  return [
    `Timeouts of ${view.ref} (on the next request)`,
    line('anon statements', 'anon'),
    line('authenticated statements', 'authenticated'),
    line('service_role statements', 'service_role'),
    line('idle in transaction', 'idle_in_transaction'),
  ].join('\n')
}

export const timeoutCommands: Command[] = [
  {
    words: ['projects', 'timeouts'],
    positionals: ['REF'],
    usage: USAGE,
    summary: "Show (or change) a project's statement timeouts per API role (0: no limit; --reset: the defaults)",
    options: { ...Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: 'string' as const }])), reset: { type: 'boolean' } },
    optionValues: Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, 'DURATION'])),
    optionHelp: {
      anon: 'statement timeout of requests with the anon key (default 3s)',
      authenticated: 'statement timeout of signed-in users\' requests (default 8s)',
      'service-role': 'statement timeout of service_role requests (default 60s)',
      'idle-in-transaction': 'how long a transaction may sit idle (default 10s)',
      reset: 'put every timeout back to its default (the others given are applied after)',
    },
    notes: 'A timeout is a duration with its unit: 500ms, 3s, 2m (or 2min) or 1h; at most 1h; 0: no limit. Applies from the next request.',
    async run(context, args) {
      const ref = args.positionals[0]!
      const set: RoleTimeoutsChange['set'] = {}
      for (const [flag, field] of Object.entries(FLAGS)) {
        const raw = stringOption(args, flag, false)
        if (raw === undefined) continue
        const read = readTimeout(raw, `--${flag}`)
        if ('problem' in read) throw refusedValue(read.problem)
        set[field] = read.ms
      }
      const reset = args.values.reset === true
      const controlPlane = await context.controlPlane()
      return reset || Object.keys(set).length > 0 ? setRoleTimeouts(controlPlane, ref, { set, reset }) : getRoleTimeouts(controlPlane, ref)
    },
    human: show,
  },
]
