-- injection_spans: text inside an injection span of a tool output (grain: one span).
-- Run once per pattern of policy [injection]: a `block` pattern matches the whole
-- span; a `marker` starts a span that runs to the next blank line.
-- Inputs: injection_candidates (the outputs some pattern matches). Parameters: $ord,
-- $kind, $pattern.
with final as (
    select $ord::bigint as ord, trajectory_id, action_idx,
        unnest(regexp_extract_all(content,
            case when $kind = 'block' then $pattern
                 else '(?:' || $pattern || ')[^\n]*(?:\n[^\n]*\S[^\n]*)*' end)) as span
    from injection_candidates
)
select * from final
