// The six email kinds, their default subjects and bodies, and rendering of
// GoTrue's template variables ({{ .ConfirmationURL }} and friends).
export const TEMPLATE_KINDS = ['confirmation', 'recovery', 'magic_link', 'invite', 'email_change', 'reauthentication'] as const
export type TemplateKind = (typeof TEMPLATE_KINDS)[number]

/**
 * What a saved body must contain so that the mail still does its job: the
 * link, except for reauthentication, whose mail is only a code (GoTrue's
 * reauthentication template has no link).
 */
const LINK = { name: '{{ .ConfirmationURL }}', pattern: /\{\{\s*\.ConfirmationURL\s*\}\}/ }
export const REQUIRED_VARIABLE: Record<TemplateKind, { name: string; pattern: RegExp }> = {
  confirmation: LINK,
  recovery: LINK,
  magic_link: LINK,
  invite: LINK,
  email_change: LINK,
  reauthentication: { name: '{{ .Token }}', pattern: /\{\{\s*\.Token\s*\}\}/ },
}

export interface TemplateValues {
  ConfirmationURL: string
  Token: string
  TokenHash: string
  SiteURL: string
  Email: string
  NewEmail: string
  RedirectTo: string
}

function body(title: string, lead: string, button: string): string {
  return `<h2>${title}</h2>
<p>${lead}</p>
<p><a href="{{ .ConfirmationURL }}" style="display:inline-block;padding:10px 18px;background:#1f6feb;color:#ffffff;text-decoration:none;border-radius:6px">${button}</a></p>
<p>If the button does not work, open this link:<br>{{ .ConfirmationURL }}</p>
<p>Or enter the code: {{ .Token }}</p>
<p>This mail was sent for {{ .SiteURL }}. If you did not ask for it, ignore it.</p>
`
}

const DEFAULTS: Record<TemplateKind, { subject: string; body: string }> = {
  confirmation: {
    subject: 'Confirm Your Email',
    body: body('Confirm your email address', 'Follow the link below to confirm {{ .Email }} and finish signing up to {{ .SiteURL }}.', 'Confirm email address'),
  },
  recovery: {
    subject: 'Reset Your Password',
    body: body('Reset your password', 'Follow the link below to reset the password of {{ .Email }} on {{ .SiteURL }}.', 'Reset password'),
  },
  magic_link: {
    subject: 'Your Magic Link',
    body: body('Your sign-in link', 'Follow the link below to sign in to {{ .SiteURL }} as {{ .Email }}.', 'Sign in'),
  },
  invite: {
    subject: 'You have been invited',
    body: body('You have been invited', 'You have been invited to create an account on {{ .SiteURL }}. Follow the link below to accept.', 'Accept the invite'),
  },
  email_change: {
    subject: 'Confirm Email Change',
    body: body('Confirm your new email address', 'Follow the link below to change the address of your account on {{ .SiteURL }} from {{ .Email }} to {{ .NewEmail }}.', 'Change email address'),
  },
  // GoTrue's subject; a code only, entered by the app as the `nonce` of a password change.
  reauthentication: {
    subject: 'Confirm reauthentication',
    body: `<h2>Confirm reauthentication</h2>
<p>To confirm it is you on {{ .SiteURL }}, enter the code: {{ .Token }}</p>
<p>If you did not ask for it, ignore this mail and consider changing your password.</p>
`,
  },
}

export function defaultTemplates(): Record<TemplateKind, { subject: string; body: string }> {
  return DEFAULTS
}

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')
}

const VARIABLE = /\{\{\s*\.([A-Za-z]+)\s*\}\}/g

/** Fills in the variables; `html` escapes them (body), otherwise they go in as they are (subject). */
export function render(template: string, values: TemplateValues, html: boolean): string {
  return template.replace(VARIABLE, (whole, name: string) => {
    const value = (values as unknown as Record<string, string | undefined>)[name]
    if (value === undefined) return whole
    return html ? escapeHtml(value) : value
  })
}
