// A member's ways in before any session (issue 42): the invitation's page,
// where the password is chosen, and the password reset (ask for the mail;
// the mail's link chooses a new one). routes.ts serves them and signs the
// member in once the password is set.
import { html, type Safe } from './html.ts'

const PASSWORD_RULE = 'At least 8 characters.'

export function acceptPage(token: string): Safe {
  return html`<section><h1>Accept the invitation</h1>
<form method="post" action="/dashboard/accept">
<input type="hidden" name="token" value="${token}">
<label for="password">Choose a password</label><input type="password" id="password" name="password" autocomplete="new-password" minlength="8" required>
<p class="muted">${PASSWORD_RULE}</p>
<p><button id="accept">Set the password and sign in</button></p></form></section>`
}

/** Without a token: ask for the mail; with the mail's token: choose the new password. */
export function resetPage(token: string | undefined): Safe {
  if (token === undefined) {
    return html`<section><h1>Reset the password</h1>
<form method="post" action="/dashboard/reset">
<label for="email">Your email</label><input type="email" id="email" name="email" autocomplete="username" required>
<p><button id="send-reset">Send the reset link</button></p></form></section>`
  }
  return html`<section><h1>Choose a new password</h1>
<form method="post" action="/dashboard/reset/confirm">
<input type="hidden" name="token" value="${token}">
<label for="password">New password</label><input type="password" id="password" name="password" autocomplete="new-password" minlength="8" required>
<p class="muted">${PASSWORD_RULE}</p>
<p><button id="reset">Set the password and sign in</button></p></form></section>`
}

export function resetSentPage(): Safe {
  return html`<section><h1>Check your mail</h1><p id="reset-sent">If that email belongs to a member, a link to choose a new password is on its way; it works for an hour.</p>
<p><a href="/dashboard">Back to sign in</a></p></section>`
}
