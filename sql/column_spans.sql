-- column_spans: cells of a table in a tool output whose column a content detector's
-- `column` rule names (grain: one span, as content_spans). Run once per `column` rule of
-- policy [[content.sources]] over content_candidates; the stage adds its rows to
-- content_spans (pipeline/stages/tables.py content_spans). A `column` rule reads tables
-- (a query result, CSV, TSV, a Markdown or psql table): its pattern names a column, tested
-- on each header cell set between delimiters (`|api_key|`), and its spans are the cells
-- below that header in that column; see column_rows. A rule with `luhn` keeps only cells
-- whose digits pass the Luhn check; a rule's `unless` drops each cell it matches.
-- Inputs: content_candidates. Parameters: $ord, $kind, $pattern, $luhn, $max_spans, $unless.
with table_lines as (
    -- kind 'column': the first 4,096 lines of each candidate output, numbered, with the
    -- delimiter that splits each (a pipe, a tab, else a comma: a pipe table's cells may hold
    -- commas, a CSV's no pipes)
    select trajectory_id, action_idx, n, line,
        case when contains(line, '|') then '|' when contains(line, chr(9)) then chr(9)
             when contains(line, ',') then ',' end as delim
    from (select trajectory_id, action_idx, unnest(ls) as line, generate_subscripts(ls, 1) as n
          from (select trajectory_id, action_idx, string_split(content, chr(10))[1:4096] as ls
                from content_candidates where $kind = 'column' and regexp_matches(content, $pattern)))
),
header_lines as (
    -- the first 16 lines of an output where the pattern meets a cell (tested on the line: it
    -- anchors on delimiters itself), as cells; a hostile output of many header-like lines
    -- costs 16 splits, not one per line. A header begins its table: a line after a line of
    -- as many cells by the same delimiter is a row (psql's `\d users`, a schema listing:
    -- the row naming the `password_hash` column heads none of the rows below it)
    select trajectory_id, action_idx, n, delim, cells
    from (select trajectory_id, action_idx, n, delim, prev,
              list_transform(string_split(line, delim), lambda c: trim(c, ' ' || chr(9) || chr(13) || '"''`')) as cells
          from (select *, lag(line) over (partition by trajectory_id, action_idx order by n) as prev from table_lines)
          where delim is not null and regexp_matches(line, $pattern)
          qualify row_number() over (partition by trajectory_id, action_idx order by n) <= 16)
    -- (psql's rule under its header, `----+----`, heads rows too; a MySQL border `+----+` does not)
    where not coalesce(contains(prev, delim) and len(string_split(prev, delim)) = len(cells)
                       or regexp_full_match(trim(prev), '-+(?:\+-+)+'), false)
),
headers as (
    -- the first that looks like a table header (two or more cells, every one empty or a
    -- name, a unit in parentheses at most: `login(user, password, token)` and prose are
    -- none, `amount (usd)` is one) and names a column the rule's pattern matches whole (the
    -- cell between delimiters)
    select trajectory_id, action_idx, min(n) as header_n, arg_min(delim, n) as delim,
        arg_min(len(cells), n) as width, arg_min(cols, n) as cols
    -- at most 8 columns: a hostile header of thousands would make rows x columns cells
    from (select *, list_filter(range(1, len(cells) + 1),
                                lambda i: regexp_matches(delim || cells[i] || delim, $pattern))[1:8] as cols
          from header_lines
          where len(cells) >= 2
            and list_bool_and(list_transform(cells, lambda c: regexp_full_match(c, '(?:[A-Za-z_][A-Za-z0-9_ ./-]{0,63}(?:[(][A-Za-z0-9_ ./%-]{0,32}[)])?)?'))))
    where len(cols) > 0
    group by all
),
column_rows as (
    -- the cells under the header in its columns, from the rows after it that split into as
    -- many cells by the same delimiter (a table's rows; a line of other text rarely does;
    -- a Markdown row's outer pipes give an empty first and last cell, as in its header)
    select trajectory_id, action_idx, n,
        unnest(list_transform(cols, lambda i: trim(cells[i], ' ' || chr(9) || chr(13) || '"''`'))) as span
    from (select l.trajectory_id, l.action_idx, l.n, h.cols, string_split(l.line, l.delim) as cells, h.width
          from table_lines l join headers h using (trajectory_id, action_idx)
          where l.n > h.header_n and l.delim = h.delim)
    where len(cells) = width
),
column_matches as (
    select trajectory_id, action_idx, list(span order by n, span)[1:$max_spans] as spans
    from column_rows
    where span <> '' and not regexp_matches(span, $unless)
    group by all
),
final as (
    select $ord::bigint as ord, trajectory_id, action_idx, span
    from (select trajectory_id, action_idx, unnest(spans) as span from column_matches)
    where not $luhn or lg_luhn(regexp_replace(span, '[^0-9]', '', 'g'))
)
select * from final
