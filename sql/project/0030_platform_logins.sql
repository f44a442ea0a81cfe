-- Owner code never acts as the platform (issue 36 item 1). The API's login
-- role (:"api_role", Supabase's authenticator) runs every owner-reachable
-- statement of REST, GraphQL and Push's API, so it holds nothing of its own:
-- it may become anon, authenticated, service_role and the project's own API
-- roles, and nothing else. Auth runs on a login role of its own (:"auth_role",
-- lib/db/platform-logins.ts), which may become baseplane_auth_admin (Auth's
-- tables) and supabase_auth_admin (the hooks); owner code can run there (a
-- trigger on auth.users, a Postgres hook), as on Supabase, where it runs as
-- supabase_auth_admin. The quota counters and Push's keys are the platform
-- login role's (:"platform_role"), on which no owner code runs.
grant connect, temporary on database :"database" to :"auth_role", :"platform_role";

revoke baseplane_auth_admin from :"api_role";
revoke supabase_auth_admin from :"api_role";
grant baseplane_auth_admin, supabase_auth_admin to :"auth_role";

-- The monthly active users counters: read by Auth's role (and the owner), written only by the platform's.
revoke insert, update, delete on auth.monthly_active_users, auth.monthly_active_user_counts from baseplane_auth_admin;
grant usage on schema auth to :"platform_role";
grant select, insert, update on auth.monthly_active_users, auth.monthly_active_user_counts to :"platform_role";

-- Supabase apps put triggers on auth.users (a profile row for each sign-up):
-- they fire in Auth's transaction, as baseplane_auth_admin, or as their
-- function's owner when it is SECURITY DEFINER (Supabase's own advice).
grant trigger on auth.users to :"owner_role";
