-- The monthly active users quota under `cap` (issue 27 item 3), enforced
-- where the truth is: a sign-in of a user not yet active this UTC month adds
-- the user here and one to the month's count, in the sign-in's transaction,
-- and is refused when the count is at the project's figure
-- (workers/auth/db/active-users.ts). The count row serializes concurrent
-- sign-ins, so the figure is never passed. Kept only while the project is
-- capped: the fleet's billing count is the catalogue's (usage_active_users).
create table auth.monthly_active_users (
  month date not null,
  user_id uuid not null,
  primary key (month, user_id)
);

create table auth.monthly_active_user_counts (
  month date primary key,
  users integer not null check (users >= 0)
);

grant select, insert, update, delete on auth.monthly_active_users, auth.monthly_active_user_counts to baseplane_auth_admin;
grant select on auth.monthly_active_user_counts to :"owner_role";
