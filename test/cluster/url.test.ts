import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/cluster/url.js';

describe('redactUrl', () => {
  it('hides the password of a connection string and keeps the rest', () => {
    expect(redactUrl('postgres://etl:hunter2@db.example.com:5433/lake?sslmode=require')).toBe('postgres://etl:***@db.example.com:5433/lake?sslmode=require');
    expect(redactUrl('postgresql://etl@db.example.com/lake')).toBe('postgresql://etl@db.example.com/lake');
  });

  it('hides a password given as a parameter, and an encoded one', () => {
    const shown = redactUrl('postgres://db.example.com/lake?user=etl&password=hunter2&sslpassword=k3y');
    expect(shown).not.toContain('hunter2');
    expect(shown).not.toContain('k3y');
    expect(shown).toContain('user=etl');
    expect(redactUrl('postgres://etl:p%40ss%2Fw@h/db')).toBe('postgres://etl:***@h/db');
  });

  it('shows nothing of a string it cannot read', () => {
    const shown = redactUrl('postgres://etl:hunter2@[bad');
    expect(shown).not.toContain('hunter2');
    expect(shown).toBe('postgres://(unreadable connection string)');
  });
});
