// bench:rest's data: authors, posts and comments with foreign keys and the
// policies of a small blog (anyone reads the published posts, their authors and
// comments; a signed-in user also reads and writes its own posts; anyone may
// comment, a guest as nobody and a user as itself), made by the project's
// owner role as a developer would. And what the benchmark's pages must hold,
// read as the owner, so every side's answer is checked against it.
import pg from 'pg'

export const SIZES = { authors: 100, posts: 3000, comments: 12000 }
/** The page: the newest published posts. */
export const PAGE = 20
/** Comments are inserted on the oldest post, far from the page, so the pages read the same rows in every run. */
export const INSERT_POST_ID = 1

export function setupSql(userId: string): string {
  const user = pg.escapeLiteral(userId)
  return `
    create table authors (id serial primary key, name text not null, user_id uuid);
    create table posts (
      id serial primary key, author_id int not null references authors(id), title text not null,
      body text not null, published boolean not null default false, created_at timestamptz not null default now()
    );
    create index on posts (author_id);
    create table comments (
      id serial primary key, post_id int not null references posts(id), user_id uuid default auth.uid(),
      body text not null, created_at timestamptz not null default now()
    );
    create index on comments (post_id);
    create index on comments (user_id);

    insert into authors (name, user_id) select 'author ' || g, case when g = 1 then ${user}::uuid end from generate_series(1, ${SIZES.authors}) g;
    -- Three posts in four published; author 1 is the signed-in user.
    insert into posts (author_id, title, body, published)
      select 1 + g % ${SIZES.authors}, 'post ' || g, repeat('text of post ' || g || '. ', 10), g % 4 <> 0 from generate_series(1, ${SIZES.posts}) g;
    insert into comments (post_id, user_id, body)
      select 1 + g % ${SIZES.posts}, case when g % 5 = 0 then ${user}::uuid end, 'comment ' || g from generate_series(1, ${SIZES.comments}) g;

    alter table authors enable row level security;
    alter table posts enable row level security;
    alter table comments enable row level security;
    create policy authors_read on authors for select to anon, authenticated using (true);
    create policy posts_read on posts for select to anon, authenticated
      using (published or author_id in (select id from authors where user_id = auth.uid()));
    create policy posts_insert on posts for insert to authenticated
      with check (author_id in (select id from authors where user_id = auth.uid()));
    create policy posts_update on posts for update to authenticated
      using (author_id in (select id from authors where user_id = auth.uid()))
      with check (author_id in (select id from authors where user_id = auth.uid()));
    create policy comments_read on comments for select to anon, authenticated using (true);
    create policy comments_insert on comments for insert to anon, authenticated with check (user_id is not distinct from auth.uid());
    create policy comments_delete on comments for delete to authenticated using (user_id = auth.uid());
    analyze;
  `
}

/** A post of the filtered page. */
export interface PostRow {
  id: number
  title: string
  author_id: number
}

/** A post of the embedded page: its author's name and its comments ([id, body], by id). */
export interface EmbeddedPost {
  id: number
  title: string
  author: string
  comments: [number, string][]
}

export interface ExpectedPages {
  filtered: PostRow[]
  embedded: EmbeddedPost[]
}

/** The two pages as the owner reads them (the page's posts are published, so anon and the user see the same). */
export async function expectedPages(owner: pg.ClientBase): Promise<ExpectedPages> {
  const { rows } = await owner.query<{ id: number; title: string; author_id: number; author: string; comments: [number, string][] }>(
    `select p.id, p.title, p.author_id, a.name as author,
            coalesce((select json_agg(json_build_array(c.id, c.body) order by c.id) from comments c where c.post_id = p.id), '[]') as comments
       from posts p join authors a on a.id = p.author_id
      where p.published order by p.id desc limit ${PAGE}`,
  )
  return {
    filtered: rows.map(({ id, title, author_id }) => ({ id, title, author_id })),
    embedded: rows.map(({ id, title, author, comments }) => ({ id, title, author, comments })),
  }
}

/** Whether one comment with `body` was written, by `userId` (null: a guest). */
export async function insertedOnce(owner: pg.ClientBase, body: string, userId: string | null): Promise<string | undefined> {
  const { rows } = await owner.query<{ post_id: number; user_id: string | null }>('select post_id, user_id from comments where body = $1', [body])
  if (rows.length !== 1) return `${rows.length} comments written, 1 expected`
  if (rows[0]!.post_id !== INSERT_POST_ID || rows[0]!.user_id !== userId) return `the comment was written as ${JSON.stringify(rows[0])}`
  return undefined
}
