// Every option of every command says what it does in its --help (issue 28
// item 10: some said nothing), and no value placeholder is the last word of a
// flag that names something else (--service-role ROLE took a duration). Issue
// 37 item 6: every usage line lists every option that works, each with the
// placeholder its help shows (none guessed from the flag's name, as
// --per-page PAGE was), and switches are spelled true|false on every command.
import t from 'tap'
import { commandHelp } from '../../cli/help.ts'
import { commands } from '../../cli/commands/index.ts'

t.test('every option is described', async (t) => {
  const undescribed = commands.flatMap((command) =>
    Object.keys(command.options ?? {})
      .filter((name) => !command.optionHelp?.[name])
      .map((name) => `baseplane ${command.words.join(' ')} --${name}`),
  )
  t.same(undescribed, [])
})

t.test('the timeouts take durations, and say so', async (t) => {
  const timeouts = commands.find((command) => command.words.join(' ') === 'projects timeouts')!
  const help = commandHelp(timeouts, '')
  for (const flag of ['--anon', '--authenticated', '--service-role', '--idle-in-transaction']) t.match(help, new RegExp(`\\n {2}${flag} DURATION +`), flag)
})

t.test('auth settings takes --autoconfirm true|false, and says what it does', async (t) => {
  const settings = commands.find((command) => command.words.join(' ') === 'auth settings')!
  const help = commandHelp(settings, '')
  t.match(help, /\n {2}--autoconfirm true\|false +true: a new address is confirmed at sign-up, with no mail \(mailer_autoconfirm\); false: a mailed link confirms it \(default false\)/)
  t.match(help, /^Usage: baseplane auth settings REF .*\[--autoconfirm true\|false\]/)
})

t.test('projects rest takes --pre-request NAME|none, and says what none means', async (t) => {
  const rest = commands.find((command) => command.words.join(' ') === 'projects rest')!
  const help = commandHelp(rest, '')
  t.match(help, /^Usage: baseplane projects rest REF .*\[--max-rows N\|default\] \[--pre-request NAME\|none\]/)
  t.match(help, /\n {2}--pre-request NAME\|none +the function called as the caller before every request's statement \(PostgREST's db-pre-request\).*none: no function/)
})

t.test('projects rest takes --tx-end VALUE and --plans true|false, and says what each value does', async (t) => {
  const rest = commands.find((command) => command.words.join(' ') === 'projects rest')!
  const help = commandHelp(rest, '')
  t.match(help, /^Usage: baseplane projects rest REF .*\[--pre-request NAME\|none\] \[--tx-end VALUE\] \[--plans true\|false\]/)
  t.match(help, /\n {2}--tx-end VALUE +how a request's transaction ends \(PostgREST's db-tx-end\): commit: .*; commit-allow-override: committed unless the request says Prefer: tx=rollback .*; rollback: .*; rollback-allow-override: rolled back unless the request says Prefer: tx=commit/)
  t.match(help, /\n {2}--plans true\|false +true: Accept: application\/vnd\.pgrst\.plan .* \(PostgREST's db-plan-enabled\); false: it answers 406 \(default false/)
})

/** Whether a usage line names `--name`. */
const inUsage = (usage: string, name: string) => new RegExp(`--${name}(?![a-z0-9-])`).test(usage)

/** The values a usage line gives `--name` (`--plan free|plus`; each spelling once, joined with |). */
const usageValues = (usage: string, name: string): string =>
  [...new Set([...usage.matchAll(new RegExp(`--${name}(?![a-z0-9-]) ([^\\s\\]]+)`, 'g'))].map((m) => m[1]!).filter((v) => !v.startsWith('-') && v !== '...'))].join('|')

t.test('every usage line lists every option its command takes, with the placeholder its help shows', async (t) => {
  const unlisted: string[] = []
  const differing: string[] = []
  for (const command of commands) {
    const help = commandHelp(command, '')
    for (const [name, spec] of Object.entries(command.options ?? {})) {
      const where = `baseplane ${command.words.join(' ')} --${name}`
      if (!inUsage(command.usage, name)) {
        unlisted.push(where)
        continue
      }
      if (spec.type !== 'string') continue
      const placeholder = usageValues(command.usage, name)
      // The help's option column: "  --name VALUE[ ...]  what it does".
      const shown = new RegExp(`\\n {2}--${name} (\\S+)`).exec(help)?.[1]
      const expected = command.optionValues?.[name] ?? placeholder
      if (shown !== expected) differing.push(`${where}: help ${shown}, usage ${placeholder}`)
    }
  }
  t.same(unlisted, [], 'no option missing from its usage line')
  t.same(differing, [], 'no help placeholder guessed from the flag name')
})

t.test('switches take true|false, on every command', async (t) => {
  const settings = commandHelp(commands.find((command) => command.words.join(' ') === 'auth settings')!, '')
  for (const flag of ['--autoconfirm', '--anonymous-users', '--secure-email-change', '--secure-password-change', '--webauthn-enroll', '--webauthn-verify', '--manual-linking']) {
    t.match(settings, new RegExp(`\\n {2}${flag} true\\|false +true: `), flag)
  }
  t.match(settings, /\n {2}--mail-per-hour N +auth mails the project may send per hour \(0 to 1000000; default 30\)/)
  t.match(settings, /\n {2}--anonymous-per-hour N +/)
  t.match(settings, /\n {2}--otp-expiry SECONDS +/)
  t.match(commandHelp(commands.find((command) => command.words.join(' ') === 'auth users list')!, ''), /\n {2}--per-page N +/)
  const onOff = commands.filter((command) => /\bon\|off\b|\boff\|on\b/.test(command.usage) || Object.values(command.optionValues ?? {}).some((v) => /\bon\|off\b/.test(v)))
  t.same(onOff.map((command) => command.words.join(' ')), [], 'no command spells a switch on|off')
})
