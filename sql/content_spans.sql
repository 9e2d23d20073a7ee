-- content_spans: text of a tool output that content detectors label (grain: one span).
-- Run once per `match` or `document` rule of policy [[content.sources]] over
-- content_candidates (the outputs where any detector matches at all, found by one pass of
-- the rules' alternation); the `column` rules' spans come from sql/column_spans.sql and
-- join this table in the stage (pipeline/stages/tables.py content_spans: one query text
-- per kind, because DuckDB binds every CTE of every rule's branch, and the column CTEs'
-- lambdas cost most of this stage's fixed time when every rule carried them).
-- A `match` rule's span is each match (at most $max_spans per output: bounded on
-- hostile text); a `document` rule (a confidentiality marking) makes the whole output
-- the span. A rule with `luhn` keeps only matches whose digits pass the Luhn check
-- (card numbers). A rule's `unless` drops each span it matches (for a document rule,
-- the whole output): a value that names where a secret comes from (`password =
-- os.environ[...]`, `token: string`) holds none, and RE2 has no look-ahead to say so
-- in the pattern itself. Inputs: content_candidates.
-- Parameters: $ord, $kind, $pattern, $luhn, $max_spans, $unless.
with matches as (
    select trajectory_id, action_idx,
        case when $kind = 'document'
            then case when regexp_matches(content, $pattern) and not regexp_matches(content, $unless)
                      then [content] else [] end
            -- `unless` before the cap: decoys (`token = get_token()` x 64) must not hide a secret
            else list_filter(regexp_extract_all(content, $pattern)[1:4096],
                             lambda m: not regexp_matches(m, $unless))[1:$max_spans] end as spans
    from content_candidates
    where $kind <> 'column'  -- (sql/column_spans.sql reads those)
),
final as (
    select $ord::bigint as ord, trajectory_id, action_idx, span
    from (select trajectory_id, action_idx, unnest(spans) as span from matches)
    where not $luhn or lg_luhn(regexp_replace(span, '[^0-9]', '', 'g'))
)
select * from final
