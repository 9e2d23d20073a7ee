-- final_claims: trajectories whose final assistant text makes one kind of claim
-- (refusal/failure, or success). Run once per pattern of policy [hallucination].
-- Inputs: final_texts. Parameters: $ord, $kind, $pattern.
with final as (
    select $ord::bigint as ord, $kind as kind, trajectory_id
    from final_texts where regexp_matches(final_text, $pattern)
)
select * from final
