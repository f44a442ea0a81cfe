// Every option of every command says what it does in its --help (issue 28
// item 10: some said nothing), and no value placeholder is the last word of a
// flag that names something else (--service-role ROLE took a duration).
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

t.test('auth settings takes --autoconfirm on|off, and says what it does', async (t) => {
  const settings = commands.find((command) => command.words.join(' ') === 'auth settings')!
  const help = commandHelp(settings, '')
  t.match(help, /\n {2}--autoconfirm on\|off +on: a new address is confirmed at sign-up, with no mail \(mailer_autoconfirm\)/)
  t.match(help, /^Usage: baseplane auth settings REF .*\[--autoconfirm on\|off\]/)
})

t.test('projects rest takes --pre-request NAME|none, and says what none means', async (t) => {
  const rest = commands.find((command) => command.words.join(' ') === 'projects rest')!
  const help = commandHelp(rest, '')
  t.match(help, /^Usage: baseplane projects rest REF .*\[--max-rows N\|default\] \[--pre-request NAME\|none\]/)
  t.match(help, /\n {2}--pre-request NAME\|none +the function called as the caller before every request's statement \(PostgREST's db-pre-request\).*none: no function/)
})
