-- steps: one row per event of an accepted trajectory (grain: trajectory_id, step_idx).
-- Inputs: trajectories (accepted rows have text), policy_error_types,
--         policy_error_rules, policy_content_errors, policy_classifier, policy_tools,
--         labels_in (trajectory_id, step_idx, label, score; may be empty).
-- Parameters: none.
-- Explode order (SPEC section 2): messages in order; an assistant message gives its
-- text (only when non-blank) then its tool calls in order; a tool message one result.
with traj as (
    select trajectory_id, suite, text from trajectories where reject_reason is null
),
msgs as (
    select t.trajectory_id, t.suite, m.key::bigint as message_idx, m.value as msg,
        json_type(m.value) as msg_type
    from traj t, json_each(t.text, '$.messages') m
),
messages as (
    select
        trajectory_id, suite, message_idx, msg, msg_type,
        case when msg_type = 'OBJECT' and json_type(msg, '$.role') = 'VARCHAR'
            then lower(msg ->> '$.role') end as role,
        -- content may be a string, a list of text parts, null, or (hostile) any JSON
        case json_type(msg, '$.content')
            when 'VARCHAR' then msg ->> '$.content'
            when 'NULL' then null
            when 'ARRAY' then array_to_string(list_transform(
                cast(json_extract(msg, '$.content[*]') as json[]),
                lambda p: coalesce(p ->> '$.text', p ->> '$.content',
                    case when json_type(p) = 'VARCHAR' then p ->> '$' end)), chr(10))
            else (msg -> '$.content')::varchar
        end as content
    from msgs
),
message_steps as (
    select
        trajectory_id, suite, message_idx, 0 as sub,
        case
            when role = 'user' then 'user'
            when role = 'assistant' then 'assistant_text'
            when role = 'tool' then 'tool_result'
            else 'system'  -- system, developer and any other role speak for the operator
        end as kind,
        role, content, msg
    from messages
    where role is not null
      and (role <> 'assistant' or trim(coalesce(content, '')) <> '')
),
call_steps as (
    select
        m.trajectory_id, m.suite, m.message_idx, c.key::bigint + 1 as sub,
        'tool_call' as kind, m.role, null::varchar as content, c.value as msg
    from messages m, json_each(m.msg, '$.tool_calls') c
    where m.role = 'assistant' and json_type(m.msg, '$.tool_calls') = 'ARRAY'
),
all_steps as (
    select * from message_steps
    union all
    select * from call_steps
),
numbered as (
    select
        *,
        (row_number() over (partition by trajectory_id order by message_idx, sub) - 1)::bigint as step_idx
    from all_steps
),
call_fields as (
    select
        *,
        case when kind = 'tool_call' then coalesce(msg ->> '$.function.name', msg ->> '$.name') end as tool_name,
        case
            when kind = 'tool_call' then coalesce(msg ->> '$.id', msg ->> '$.call_id')
            when kind = 'tool_result' then coalesce(msg ->> '$.tool_call_id', msg ->> '$.tool_use_id')
        end as call_id,
        case when kind = 'tool_call' then coalesce(msg -> '$.function.arguments', msg -> '$.arguments') end as args_raw,
        case when kind = 'tool_call' and json_type(msg, '$.depends_on') = 'ARRAY'
            then cast(json_extract_string(msg, '$.depends_on[*]') as varchar[]) end as depends_on,
        case when kind = 'tool_result' then msg -> '$.error' end as error_raw
    from numbered
),
args_parsed as (
    select
        *,
        -- arguments arrive as a JSON object or a string holding one; both end as JSON text
        case
            when kind <> 'tool_call' then null
            when args_raw is null or json_type(args_raw) = 'NULL' then '{}'
            when json_type(args_raw) = 'OBJECT' then json(args_raw)::varchar
            when json_type(args_raw) = 'VARCHAR' and trim(args_raw ->> '$') = '' then '{}'
            when json_type(args_raw) = 'VARCHAR' and json_valid(args_raw ->> '$')
                 and json_type(args_raw ->> '$') = 'OBJECT' then json(args_raw ->> '$')::varchar
        end as args_json,
        case when kind = 'tool_call' and json_type(args_raw) = 'VARCHAR' then args_raw ->> '$'
             when kind = 'tool_call' then args_raw::varchar end as args_text
    from call_fields
),
results as (
    select
        trajectory_id, step_idx as result_step_idx, call_id, content as result_content,
        case json_type(error_raw) when 'OBJECT' then error_raw ->> '$.type' end as err_type,
        case json_type(error_raw)
            when 'OBJECT' then coalesce(error_raw ->> '$.message', error_raw::varchar)
            when 'VARCHAR' then nullif(error_raw ->> '$', '')
            when 'NULL' then null
            when 'BOOLEAN' then case when error_raw::varchar = 'true' then 'error' end
            else error_raw::varchar
        end as err_message
    from args_parsed
    where kind = 'tool_result'
),
call_rows as (
    select trajectory_id, step_idx, call_id from args_parsed where kind = 'tool_call'
),
result_candidates as (
    -- a result answers the latest earlier call with its id
    select r.*, max(c.step_idx) as call_step_idx
    from results r
    left join call_rows c
        on c.trajectory_id = r.trajectory_id and c.call_id = r.call_id and c.step_idx < r.result_step_idx
    group by all
),
pairs as (
    -- a call takes the first result that answers it; later ones are orphans
    select *,
        case when call_step_idx is not null
            then row_number() over (partition by trajectory_id, call_step_idx order by result_step_idx) end as answer_no
    from result_candidates
),
matched as (
    select * from pairs where answer_no = 1
),
content_errors as (
    -- a result without an error field whose content opens like an error text
    select m.trajectory_id, m.result_step_idx, any_value(m.result_content) as err_text
    from matched m join policy_content_errors p on regexp_matches(m.result_content, p.pattern)
    where m.err_type is null and m.err_message is null
    group by all
),
error_texts as (
    select m.trajectory_id, m.result_step_idx, m.call_step_idx, m.err_type,
        left(coalesce(m.err_message, ce.err_text), 4096) as err_text
    from matched m
    left join content_errors ce using (trajectory_id, result_step_idx)
),
typed_status as (
    select e.*, t.status as type_status
    from error_texts e left join policy_error_types t on t.error_type = lower(e.err_type)
),
rule_status as (
    -- first text rule that matches wins (rules are ordered in the policy)
    select ts.trajectory_id, ts.result_step_idx,
        arg_min(r.name, r.ord) as rule_name, arg_min(r.status, r.ord) as rule_status
    from typed_status ts join policy_error_rules r on regexp_matches(ts.err_text, r.pattern)
    where ts.type_status is null and ts.err_text is not null
    group by all
),
call_status as (
    select
        ts.trajectory_id, ts.call_step_idx, ts.result_step_idx, ts.err_text,
        case
            when ts.type_status is not null then lower(ts.err_type)
            when rs.rule_name is not null then rs.rule_name
            when ts.err_type is not null then lower(ts.err_type)
            when ts.err_text is not null then 'untyped'
        end as error_type,
        case
            when ts.type_status is not null then ts.type_status
            when rs.rule_status is not null then rs.rule_status
            when ts.err_text is not null then 'unknown'  -- an error we cannot read: fail closed
            else 'executed'
        end as exec_status
    from typed_status ts
    left join rule_status rs using (trajectory_id, result_step_idx)
),
user_counts as (
    select
        *,
        -- user/system messages seen so far: a retry chain never spans one
        count(*) filter (where kind in ('user', 'system')) over (
            partition by trajectory_id order by step_idx rows unbounded preceding) as n_user_before
    from args_parsed
),
joined as (
    select
        s.trajectory_id, s.step_idx, s.suite, s.message_idx, s.kind,
        coalesce(s.tool_name, pc.tool_name) as tool_name, s.call_id,
        coalesce(s.args_json, s.args_text) as arguments,
        case when s.kind = 'tool_call' then s.args_json is not null end as args_ok,
        s.content,
        coalesce(cs.error_type, rs.error_type, case when s.kind = 'tool_call' and cs.call_step_idx is null then 'no_result' end) as error_type,
        coalesce(cs.err_text, rs.err_text) as error_text,
        case
            when s.kind = 'tool_call' then coalesce(cs.exec_status, 'unknown')  -- no result: fail closed
            when s.kind = 'tool_result' then rs.exec_status
        end as exec_status,
        cs.result_step_idx,
        case when s.kind = 'tool_result' then pr.call_step_idx end as call_step_idx,
        case when s.kind = 'tool_result' then coalesce(pr.answer_no = 1, false) end as answered,
        s.depends_on, s.n_user_before
    from user_counts s
    left join call_status cs on cs.trajectory_id = s.trajectory_id and cs.call_step_idx = s.step_idx and s.kind = 'tool_call'
    left join pairs pr on pr.trajectory_id = s.trajectory_id and pr.result_step_idx = s.step_idx and s.kind = 'tool_result'
    left join call_status rs on rs.trajectory_id = s.trajectory_id and rs.result_step_idx = s.step_idx and s.kind = 'tool_result'
    left join args_parsed pc on pc.trajectory_id = s.trajectory_id and pc.step_idx = pr.call_step_idx
),
classified as (
    -- built-in rule classifier: each tool call in isolation, first rule by order
    select j.trajectory_id, j.step_idx, arg_min(c.name, c.ord) as rule_name
    from joined j
    left join policy_tools t on t.tool_key = lower(j.tool_name)
    join policy_classifier c
        on (c.tool_key = '*' or c.tool_key = lower(j.tool_name) or c.tool_key = lower(t.catalog_name))
       and regexp_matches(
            case when c.argument = '*' then j.arguments
                 when j.args_ok then j.arguments ->> ('$."' || c.argument || '"') end,
            c.pattern)
    where j.kind = 'tool_call'
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
