-- error_rule_hits: calls whose error text matches one text rule (grain: ord,
-- trajectory_id, step_idx). Run once per rule of [[exec_status.rules]].
-- Inputs: error_texts. Parameters: $ord, $pattern.
with final as (
    select $ord::bigint as ord, trajectory_id, step_idx
    from error_texts
    where type_status is null and err_text is not null and regexp_matches(err_text, $pattern)
)
select * from final
