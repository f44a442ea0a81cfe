-- `baseplane servers drain ID`: a draining server keeps its projects and takes no new one.
alter table baseplane.db_servers add column draining boolean not null default false;
