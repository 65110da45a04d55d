import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Transformation rules (issue 32): a site's rules (channel_id null) turn its import stage into the
    -- intermediate stage, a channel's rules its mapped rows into what its template checks and its file
    -- carries. They run in position order; each writes one attribute (null: a rule that only
    -- excludes) with its then actions where its condition holds, its else actions elsewhere.
    CREATE TABLE rule (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES account (id) ON DELETE CASCADE,
      site_id bigint NOT NULL REFERENCES site (id) ON DELETE CASCADE,
      channel_id bigint REFERENCES channel (id) ON DELETE CASCADE,
      position integer NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      description text NOT NULL DEFAULT '',
      attribute text,
      condition jsonb,
      then_actions jsonb NOT NULL,
      else_actions jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX rule_scope_idx ON rule (site_id, channel_id, position);

    -- What rules fold case with, whatever the database's own locale (a database made with
    -- --locale=C lowers ASCII only): Unicode's case mapping, the same on every installation.
    DO $$
    BEGIN
      IF current_setting('server_version_num')::integer >= 170000 THEN
        EXECUTE 'CREATE COLLATION catalog_fold (provider = builtin, locale = ''C.UTF-8'')';
      ELSE
        EXECUTE 'CREATE COLLATION catalog_fold (provider = icu, locale = ''und'')';
      END IF;
    END
    $$;

    -- strip_html: tags out, entities decoded (named ones a shop's HTML uses, and numeric ones). A tag
    -- starts with a letter, / or ! after its <, so that "2 < 3 and 5 > 4" stays text; a tag that ends
    -- a line or a block (br, p, li, …) leaves a space between the words it separated, and the spaces
    -- the tags leave are collapsed to one, as a browser shows them. A value without < or & is kept.
    CREATE FUNCTION catalog_html_text(value text) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
    DECLARE
      result text := value;
      found text[];
      code integer;
      named constant text[] := ARRAY[
        ['&nbsp;', chr(160)], ['&lt;', '<'], ['&gt;', '>'], ['&quot;', '"'], ['&apos;', ''''], ['&euro;', chr(8364)],
        ['&pound;', chr(163)], ['&copy;', chr(169)], ['&reg;', chr(174)], ['&trade;', chr(8482)], ['&hellip;', chr(8230)],
        ['&ndash;', chr(8211)], ['&mdash;', chr(8212)], ['&lsquo;', chr(8216)], ['&rsquo;', chr(8217)], ['&ldquo;', chr(8220)],
        ['&rdquo;', chr(8221)], ['&bull;', chr(8226)], ['&deg;', chr(176)], ['&times;', chr(215)], ['&auml;', chr(228)],
        ['&ouml;', chr(246)], ['&uuml;', chr(252)], ['&Auml;', chr(196)], ['&Ouml;', chr(214)], ['&Uuml;', chr(220)],
        ['&szlig;', chr(223)], ['&eacute;', chr(233)], ['&egrave;', chr(232)], ['&agrave;', chr(224)], ['&ccedil;', chr(231)]];
      pair text[];
    BEGIN
      IF strpos(result, '<') = 0 AND strpos(result, '&') = 0 THEN RETURN result; END IF;
      result := regexp_replace(result,
        '</?(br|p|div|li|ul|ol|dl|dt|dd|tr|td|th|table|h[1-6]|section|article|header|footer|blockquote|hr)([[:space:]/][^<>]*)?>', ' ', 'gi');
      result := regexp_replace(result, '<[A-Za-z/!?][^<>]*>', '', 'g');
      result := btrim(regexp_replace(result, '  +', ' ', 'g'), ' ');
      FOREACH pair SLICE 1 IN ARRAY named LOOP
        result := replace(result, pair[1], pair[2]);
      END LOOP;
      FOR found IN SELECT DISTINCT regexp_matches(result, '&#([xX]?)([0-9a-fA-F]{1,6});', 'g') LOOP
        code := CASE WHEN found[1] = '' THEN CASE WHEN found[2] ~ '^[0-9]+$' THEN found[2]::integer END
                     ELSE ('x' || lpad(found[2], 8, '0'))::bit(32)::integer END;
        IF code IS NOT NULL AND code BETWEEN 1 AND 1114111 AND code NOT BETWEEN 55296 AND 57343 THEN
          result := replace(result, '&#' || found[1] || found[2] || ';', chr(code));
        END IF;
      END LOOP;
      RETURN replace(result, '&amp;', '&');
    END
    $$;
  `.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION catalog_html_text(text);
    DROP COLLATION catalog_fold;
    DROP TABLE rule;
  `.execute(db)
}
