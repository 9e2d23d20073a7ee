-- final_texts: the last assistant text of each trajectory (grain: trajectory_id).
-- Inputs: steps. Parameters: none.
with final as (
    select trajectory_id, arg_max(content, step_idx) as final_text
    from steps where kind = 'assistant_text' group by all
)
select * from final
