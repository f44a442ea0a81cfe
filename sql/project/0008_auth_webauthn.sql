-- WebAuthn second factors (issue 25 item 3), with GoTrue's column names
-- (migrations/20240729123726_add_mfa_webauthn_columns): the verified
-- credential and its authenticator model on the factor, the ceremony's
-- state (challenge, kind) on the challenge.
alter table auth.mfa_factors add column if not exists web_authn_credential jsonb;
alter table auth.mfa_factors add column if not exists web_authn_aaguid uuid;
alter table auth.mfa_challenges add column if not exists web_authn_session_data jsonb;
