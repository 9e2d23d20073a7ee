-- injection_candidates: the tool outputs where some pattern of policy [injection] matches
-- (grain: trajectory_id, action_idx). One RE2 pass of the alternation of all `block` and
-- `marker` patterns, so the per-pattern extraction (sql/injection_spans.sql) reads only
-- these: a span of either kind starts with its pattern's match, so an output no pattern
-- matches holds no span. Inputs: outputs. Parameters: $pattern (the alternation, each
-- pattern in its own group so its inline flags stay its own).
with final as (
    select trajectory_id, action_idx, content
    from outputs
    where regexp_matches(content, $pattern)
)
select * from final
