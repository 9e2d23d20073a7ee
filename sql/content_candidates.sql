-- content_candidates: the tool outputs where some content detector matches (grain:
-- trajectory_id, action_idx). One RE2 pass of the alternation of all policy
-- [[content.sources]] patterns, so the per-rule extraction (sql/content_spans.sql)
-- reads only these. Inputs: outputs. Parameters: $pattern (the alternation).
with final as (
    select trajectory_id, action_idx, content
    from outputs
    where regexp_matches(content, $pattern)
)
select * from final
