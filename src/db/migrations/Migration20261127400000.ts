import { Migration } from '@mikro-orm/migrations';

const BATCH = 1000;

/**
 * Every root item gets the duplicate guard's key of its text (`post.duplicate_key`), computed as tools/internal/duplicates.ts
 * computes it today: root items stored before keys existed, or whose keys Migration20261126010000 dropped, were compared
 * with up to 500 of their channel's posts at each create (a second lookup on every create). With every key present, a
 * create finds an earlier post by one indexed lookup and nothing else. Roots without text keep a null key (the guard does
 * not compare them). If the comparison changes again, a new migration recomputes the keys the same way.
 */
export class Migration20261127400000 extends Migration {
  override async up(): Promise<void> {
    // Imported here: the guard's comparison is the tools' code, loaded only when a database needs its keys.
    const { postKeys } = await import('../../../tools/internal/duplicates.js');
    let after = '';
    for (;;) {
      const rows = (await this.execute(
        'select id, content, settings from post where position = 0 and duplicate_key is null and id > ? order by id limit ?',
        [after, BATCH],
      )) as { id: string; content: string; settings: Record<string, unknown> | null }[];
      if (rows.length === 0) return;
      const keyed = rows
        .map((row) => ({ id: row.id, key: postKeys(row.content ?? '', row.settings ?? {}).duplicateKey }))
        .filter((row): row is { id: string; key: string } => row.key !== null);
      if (keyed.length > 0) {
        await this.execute(
          'update post set duplicate_key = keyed.key from jsonb_to_recordset(?::jsonb) as keyed(id text, key text) where post.id = keyed.id',
          [JSON.stringify(keyed)],
        );
      }
      after = rows[rows.length - 1].id;
    }
  }

  override async down(): Promise<void> {
    // Keys are derived data: leaving them is harmless to the schema before this migration.
  }
}
