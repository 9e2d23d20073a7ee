-- steps: one row per event of an accepted trajectory (grain: trajectory_id, step_idx).
-- Inputs: events, error_texts, error_rule_hits, classifier_hits, policy_error_rules,
--         policy_classifier, labels_in (trajectory_id, step_idx, label, score; may be empty).
-- Parameters: none.
-- exec_status: a structured error type the policy maps wins; else the first text rule
-- that matches (rules are ordered); an error nobody can read, or no result at all, is
-- `unknown` and scored as executed (fail closed); no error is `executed`.
with first_rule as (
    -- the first matching rule that applies to this kind of tool
    select h.trajectory_id, h.step_idx, arg_min(r.name, r.ord) as rule_name, arg_min(r.status, r.ord) as rule_status
    from error_rule_hits h
    join policy_error_rules r on r.ord = h.ord
    join error_texts et on et.trajectory_id = h.trajectory_id and et.step_idx = h.step_idx
    where r.programs or not et.is_program
    group by all
),
call_status as (
    select
        et.trajectory_id, et.step_idx as call_step_idx, et.result_step_idx, et.err_text,
        case
            when et.type_status is not null then lower(et.err_type)
            when fr.rule_name is not null then fr.rule_name
            when et.err_type is not null then lower(et.err_type)
            when et.err_text is not null then 'untyped'
        end as error_type,
        case
            when et.type_status is not null then et.type_status
            -- content-only evidence never blocks a call, nor fails one whose output is
            -- untrusted, unless its arguments did not even parse (then it cannot have run)
            when et.from_content and fr.rule_status = 'blocked' then 'unknown'
            when et.from_content and et.untrusted_output and fr.rule_status = 'failed' and et.args_ok
                then 'unknown'
            when fr.rule_status is not null then fr.rule_status
            when et.err_text is not null then 'unknown'
            else 'executed'
        end as exec_status
    from error_texts et
    left join first_rule fr on fr.trajectory_id = et.trajectory_id and fr.step_idx = et.step_idx
),
joined as (
    select
        e.trajectory_id, e.step_idx, e.suite, e.message_idx, e.kind, e.tool_name, e.call_id, e.arguments,
        e.args_ok, e.content,
        coalesce(cs.error_type, rs.error_type,
                 case when e.kind = 'tool_call' and cs.call_step_idx is null then 'no_result' end) as error_type,
        coalesce(cs.err_text, rs.err_text) as error_text,
        case
            when e.kind = 'tool_call' then coalesce(cs.exec_status, 'unknown')  -- no result: fail closed
            when e.kind = 'tool_result' then rs.exec_status
        end as exec_status,
        e.result_step_idx, e.call_step_idx, e.answered, e.depends_on, e.n_user_before
    from events e
    left join call_status cs on cs.trajectory_id = e.trajectory_id and cs.call_step_idx = e.step_idx and e.kind = 'tool_call'
    left join call_status rs on rs.trajectory_id = e.trajectory_id and rs.result_step_idx = e.step_idx and e.kind = 'tool_result'
),
classified as (
    -- built-in rule classifier: each tool call in isolation, first rule by order
    select h.trajectory_id, h.step_idx, arg_min(c.name, c.ord) as rule_name
    from classifier_hits h join (select distinct ord, name from policy_classifier) c on c.ord = h.ord
    where not h.written  -- a command written into a file is not executed (sql/executed_writes.sql)
    group by all
),
labelled as (
    select
        j.*,
        coalesce(l.label, case when cl.rule_name is not null then 'unsafe' else 'safe' end) as label,
        case when l.label is not null then l.score
             else case when cl.rule_name is not null then 1.0 else 0.0 end end as score,
        case when l.label is not null then 'input' else 'rules' end as label_source,
        case when l.label is null then cl.rule_name end as label_rule
    from joined j
    left join labels_in l on l.trajectory_id = j.trajectory_id and l.step_idx = j.step_idx
    left join classified cl on cl.trajectory_id = j.trajectory_id and cl.step_idx = j.step_idx
)
select * from labelled
