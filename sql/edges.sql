-- edges: dependency edges between logical actions
-- (grain: trajectory_id, src_action_idx, dst_action_idx, kind).
-- Inputs: steps, actions, action_roles, resources, outputs, injection_spans,
--         content_spans, settings_outputs, policy_content, policy_tools (macros from sql/macros.sql).
-- Parameters: $min_len (shortest fragment that is evidence), $max_sources (a
--             fragment in more outputs than this within a trajectory is too common),
--             $program_args (the [inference] shell_args and code_args), $max_pairs
--             (settings.max_edge_pairs).
-- Sources of edges are executed actions (they have output); targets are executed or
-- blocked actions (a blocked sink still shows what was attempted).
-- Bounded per trajectory: each kind of edge joins one side with another on a shared
-- resource, key or call id, and the rows of those joins grow with the product of the sides
-- (1,500 writes of one file before 1,500 reads of it: 2.25 million rows, 1.5 GB, in an
-- 825 KB record). `pair_counts` counts the rows each join would make by aggregation (a
-- running count of one side, summed at the other: linear in the sides); a trajectory whose
-- total exceeds $max_pairs gets no edges, and one row of kind 'too_many_pairs' (its
-- evidence names the counts) that pipeline/stages/tables.py moves to the stage
-- edge_rejects (record_too_large, sql/step_rejects.sql) before anything reads `edges`.
with nodes as (
    select distinct trajectory_id, action_idx, tool_name, call_step_idx, result_step_idx,
        executed, blocked, conf, full_conf, integ
    from action_roles
),
arguments as (
    select n.trajectory_id, n.action_idx, n.call_step_idx, a.arguments, t.control, t.shell_arg, t.code_arg,
        -- an inferred shell/code step takes its program from whichever lexicon argument the
        -- call passes (pipeline/analysis/programs.py), so each of them chooses the effect; so
        -- does a catalogued one's call that passes neither of its own program arguments
        coalesce((t.shell_arg is not null or t.code_arg is not null)
                 and (t.role_source <> 'catalog'
                      or not list_has_any(json_keys(a.arguments),
                                          list_filter([t.shell_arg, t.code_arg], lambda x: x is not null))), false)
            as inferred_program
    from nodes n
    join actions a using (trajectory_id, action_idx)
    left join policy_tools t on t.tool_key = lower(n.tool_name)
    where a.args_ok
),
argument_lists as (
    -- arguments of more than 16 KB are read as two lists, one read each (json_keys and
    -- json_extract '$.*': document order, a repeated name twice, as json_each gives them);
    -- json_each carries the whole document on every row it returns, so its memory grows
    -- with keys x size (8,000 keys, 142 KB, ran out of the 1.8 GB limit and ended the run).
    -- Smaller ones keep json_each (the same rows; a cast on every call cost 13% of this stage)
    select *, strlen(arguments::varchar) > 16384 and json_type(arguments) = 'OBJECT' as wide
    from arguments
),
argument_entries as (
    -- each argument (name, JSON value) of a call
    select * exclude (arguments, wide), unnest(json_keys(arguments)) as key,
        unnest(json_extract(arguments, '$.*')) as value
    from argument_lists where wide
    union all by name
    select a.* exclude (arguments, wide), j.key as key, j.value as value
    from argument_lists a, json_each(a.arguments) j
    where not a.wide
),
argument_values as (
    select a.trajectory_id, a.action_idx, a.call_step_idx, a.key as arg,
        case when json_type(a.value) = 'VARCHAR' then a.value ->> '$' else a.value::varchar end as value,
        -- an argument that chooses the effect (recipient, url, the command itself)
        coalesce(list_contains(a.control, a.key) or a.key = a.shell_arg or a.key = a.code_arg
                 or (a.inferred_program and list_contains($program_args::varchar[], a.key)), false)
            as is_control
    from argument_entries a
),
value_keys as (
    -- each distinct argument value's keys, computed once: agents pass the same path, id
    -- or query again and again (retries, and a suite's trajectories replay one task), and
    -- decoding and tokenising cost the same for every copy (a value that is NULL has no
    -- keys either way)
    select value, lg_keys(lg_decoded(value), $min_len) as keys
    from (select distinct value from argument_values)
),
argument_keys as materialized (
    select a.trajectory_id, a.action_idx, a.call_step_idx, a.is_control, unnest(v.keys) as key
    from argument_values a
    join value_keys v using (value)
),
argument_key_set as (
    select distinct trajectory_id, key from argument_keys
),
argument_needles as (
    -- what an output's text must contain for one of its keys to be an argument's key: the
    -- key itself, or for a prefix key its 24 characters
    select distinct trajectory_id, case when starts_with(key, 'prefix:') then key[8:] else key end as needle
    from argument_key_set
),
many_needles as (
    -- a trajectory with more than 32 argument keys: testing each output for each key costs
    -- outputs x keys substring scans (a hostile record can carry a million keys), where the
    -- regex pass it would save grows with the text alone; its outputs are all tokenised,
    -- so the tests stay linear in a trajectory's text (32: the cheapest of 16, 32 and 64
    -- on a generated shard, whose trajectories carry 18 keys on average)
    select trajectory_id from argument_needles group by trajectory_id having count(*) > 32
),
lowered_outputs as materialized (
    select trajectory_id, action_idx, lower(content) as text
    from outputs anti join many_needles using (trajectory_id)
),
keyed_outputs as (
    -- every key lg_tokens finds in an output (a token, or a token's first 24 characters) is
    -- a piece of its lower-cased text, so an output whose text holds none of its trajectory's
    -- argument keys gives output_keys no row: only the others are tokenised (a third of
    -- the outputs of a generated shard; a few substring tests cost less than the regex pass)
    select distinct o.trajectory_id, o.action_idx
    from lowered_outputs o join argument_needles k using (trajectory_id)
    where contains(o.text, k.needle)
    union all
    select trajectory_id, action_idx from outputs semi join many_needles using (trajectory_id)
),
scanned_outputs as (
    select * from outputs semi join keyed_outputs using (trajectory_id, action_idx)
),
repeated_hashes as (
    select content_hash from scanned_outputs group by content_hash having count(*) > 1
),
repeated_texts as (
    -- an output text that recurs is tokenised once: a suite's trajectories replay the same
    -- environment, so one listing, page or file comes back in many of them. Only outputs
    -- sharing a content_hash are compared by text (and an output whose hash no other
    -- output has has a text no other has), so distinct outputs cost no string grouping
    select content_hash, content, lg_tokens(content, $min_len) as tokens
    from (select distinct content_hash, content from scanned_outputs semi join repeated_hashes using (content_hash))
),
output_tokens as (
    -- may repeat a token of one output: output_keys removes duplicates after its join,
    -- on the few tokens that met an argument's key, not in every output's whole list
    select trajectory_id, action_idx, result_step_idx, content_hash,
        unnest(lg_tokens(content, $min_len)) as token
    from scanned_outputs anti join repeated_hashes using (content_hash)
    union all
    select o.trajectory_id, o.action_idx, o.result_step_idx, o.content_hash, unnest(t.tokens) as token
    from scanned_outputs o
    join repeated_texts t using (content_hash, content)
),
output_keys as (
    -- an output's keys (lg_keys of its text) that some argument of its trajectory also
    -- carries: no other key can make an edge (data_matches joins on argument keys), and
    -- common_keys counts such a key's outputs whole. So lg_keys' tests run only on the
    -- tokens that met an argument's key, not on every token of every output: a key
    -- without the 'prefix:' mark passed lg_is_evidence in lg_keys, so a token equal to it
    -- passes too; only a literal 'prefix:...' token needs the test. The test reads the
    -- argument's key, so it stays after the join (on the matches, not on every token).
    -- Each token is looked up as itself and, when long and base64-like, also as lg_keys'
    -- 24-character prefix key (a token with ':' is not base64-like, so a literal
    -- 'prefix:...' token is never a prefix key): one join, its input streamed, not stored.
    select distinct o.trajectory_id, o.action_idx, o.result_step_idx, o.content_hash, o.key
    from (select *, unnest(case when length(token) >= 32 and regexp_full_match(token, '[a-z0-9+/=_\-]{32,}')
                                then [token, 'prefix:' || left(token, 24)] else [token] end) as key
          from output_tokens) o
    join argument_key_set k on k.trajectory_id = o.trajectory_id and k.key = o.key
    where o.key <> o.token or not starts_with(o.key, 'prefix:') or lg_is_evidence(o.token, $min_len)
),
span_texts as materialized (
    -- each distinct span's keys once, as for argument values (the same injected payload
    -- or the same key file recurs across a suite's trajectories); likewise given_texts
    select span, lg_keys(span, $min_len) as keys
    from (select span from injection_spans union select span from content_spans)
),
span_keys as (
    select distinct i.trajectory_id, i.action_idx, unnest(t.keys) as key
    from injection_spans i
    join span_texts t using (span)
),
settings_keys as (
    -- fragments of the lines of a settings file that may hold a credential
    -- (sql/settings_outputs.sql) keep secret; the key's own name is no secret
    select trajectory_id, action_idx, unnest(list_filter(lg_keys(span.line, $min_len),
        lambda k: not list_contains(lg_keys(span.key, $min_len), k))) as key
    from (select trajectory_id, action_idx, unnest(spans) as span from settings_outputs)
),
content_keys as (
    -- fragments inside a span a content detector labelled (key material, tokens, card
    -- numbers, a document marked confidential) carry that rule's label, whatever the tool's;
    -- so do those of a settings file's credential lines (after the detectors of their level)
    select trajectory_id, action_idx, key, max(conf) as conf, max(integ) as integ, arg_min(name, rank) as rule
    from (
        select s.trajectory_id, s.action_idx, unnest(t.keys) as key, p.conf, p.integ, p.name,
            -(p.conf * 2 + p.integ) * 1000 + p.ord as rank
        from content_spans s join span_texts t using (span) join policy_content p using (ord)
        union all
        select trajectory_id, action_idx, key, 2, 0, 'settings_secret', -4000 + 999 from settings_keys)
    group by all
),
given_texts as (
    select content, lg_keys(content, $min_len) as keys
    from (select distinct content from steps where kind in ('user', 'system'))
),
given_keys as (
    -- fragments the user or operator supplied are not evidence of a dependency
    select distinct s.trajectory_id, unnest(g.keys) as key
    from steps s
    join given_texts g using (content)
    where s.kind in ('user', 'system')
),
common_keys as (
    select trajectory_id, key
    from output_keys
    group by all
    -- distinct outputs: the same listing fetched eight times is one source, not eight
    having count(distinct content_hash) > $max_sources
),
evidence as (
    -- read by data_matches and by the pair counts (rough_counts, join_sides)
    select o.trajectory_id, o.action_idx, o.result_step_idx, o.key, sk.key is not null as in_span,
        ck.conf as content_conf, ck.integ as content_integ, ck.rule as content_rule
    from output_keys o
    left join span_keys sk using (trajectory_id, action_idx, key)
    left join content_keys ck using (trajectory_id, action_idx, key)
    anti join given_keys g using (trajectory_id, key)
    anti join common_keys c using (trajectory_id, key)
),
call_actions as (
    select trajectory_id, action_idx, unnest(collapsed_call_ids) as call_id from actions
),
written as (
    -- each write by an executed action (from its result on), by the name the join compares
    select w.trajectory_id, regexp_replace(w.resource, '^\./', '') as name,
        coalesce(nw.result_step_idx, nw.call_step_idx) as seq
    from resources w
    join nodes nw on nw.trajectory_id = w.trajectory_id and nw.call_step_idx = w.step_idx and nw.executed
    where w.access = 'write'
),
rough_counts as (
    -- an upper bound of each join's rows per trajectory, by counts alone (one side's rows
    -- x the other's, whatever their names and order): only a trajectory over the bound by
    -- it has its rows counted exactly below (an ordinary one never is)
    select trajectory_id
    from (select trajectory_id, count(*) as n from evidence group by all) e
    join (select trajectory_id, count(*) as n from argument_keys group by all) a using (trajectory_id)
    where e.n * a.n > $max_pairs
    union
    select trajectory_id
    from resources
    group by all
    having count(*) filter (where access = 'write') * count(*) filter (where access in ('read', 'execute')) > $max_pairs
),
join_sides as (
    -- the two sides of each quadratic join below, with the step that orders them: a
    -- `leads` row pairs with every later row of the other side under the same name. Only
    -- names with a leading row can pair: the other side is cut to those first (most
    -- argument keys match no output; most reads follow no write)
    -- data_matches: an output holding a key (from its result) and an argument carrying it
    select trajectory_id, 'data' as kind, key as name, result_step_idx as seq, true as leads
    from evidence semi join rough_counts using (trajectory_id)
    union all
    select trajectory_id, 'data', key, call_step_idx, false
    from argument_keys semi join rough_counts using (trajectory_id) semi join evidence using (trajectory_id, key)
    union all
    -- resource_edges: a write and a read or execute of the resource
    select trajectory_id, 'resource', name, seq, true from written semi join rough_counts using (trajectory_id)
    union all
    select r.trajectory_id, 'resource', regexp_replace(r.resource, '^\./', ''), nr.call_step_idx, false
    from (select * from resources semi join rough_counts using (trajectory_id)) r
    join nodes nr on nr.trajectory_id = r.trajectory_id and nr.call_step_idx = r.step_idx
    semi join written w on w.trajectory_id = r.trajectory_id and w.name = regexp_replace(r.resource, '^\./', '')
    where r.access in ('read', 'execute')
),
join_rows as (
    -- at each following row, the leading rows strictly before it (on a tie the following
    -- row sorts first, so it counts none of them: the joins' conditions are strict)
    select trajectory_id, kind, count(*) filter (where leads) over (
            partition by trajectory_id, kind, name order by seq, leads rows between unbounded preceding and current row
        ) as n_before, leads
    from join_sides
),
explicit_rows as (
    -- explicit_edges: each depends_on entry x the calls with that id (an upper bound: it
    -- ignores direction and which actions execute; ids are unique in an ordinary record)
    select d.trajectory_id, sum(d.n * c.n) as n
    from (select trajectory_id, dep, count(*) as n
          from (select trajectory_id, unnest(depends_on) as dep from actions) group by all) d
    join (select trajectory_id, call_id, count(*) as n from call_actions group by all) c
        on c.trajectory_id = d.trajectory_id and c.call_id = d.dep
    group by all
),
pair_counts as (
    select trajectory_id, sum(resource) as resource, sum(data) as data, sum(explicit) as explicit
    from (
        select trajectory_id, sum(n_before) filter (where kind = 'resource') as resource,
            sum(n_before) filter (where kind = 'data') as data, 0 as explicit
        from join_rows where not leads group by all
        union all
        select trajectory_id, 0, 0, n from explicit_rows
    )
    group by all
),
too_many as materialized (
    select trajectory_id, coalesce(resource, 0)::bigint as resource, coalesce(data, 0)::bigint as data,
        coalesce(explicit, 0)::bigint as explicit
    from pair_counts
    where coalesce(resource, 0) + coalesce(data, 0) + coalesce(explicit, 0) > $max_pairs
),
data_matches as (
    select ev.trajectory_id, ev.action_idx as src, ak.action_idx as dst, ev.key, ev.in_span, ak.is_control,
        ev.content_conf, ev.content_integ, ev.content_rule
    from (select * from evidence anti join too_many using (trajectory_id)) ev
    join argument_keys ak
        on ak.trajectory_id = ev.trajectory_id and ak.key = ev.key
       and ak.call_step_idx > ev.result_step_idx  -- the output was seen before the call
),
data_edges as (
    select trajectory_id, src, dst, 'data' as kind,
        -- a content-labelled fragment is the most telling evidence, then the longest
        list(replace(key, 'prefix:', '') order by coalesce(content_conf, -1) desc, length(key) desc, key)[1]
            || coalesce(' (' || min(content_rule) filter (where content_conf is not null) || ' by content)', '')
            as evidence,
        bool_or(in_span) as any_span,
        bool_or(in_span) filter (where is_control) as control_span,
        bool_or(is_control) as any_control,
        max(content_conf) as content_conf, max(content_integ) as content_integ
    from data_matches
    group by all
),
resource_edges as (
    select w.trajectory_id, nw.action_idx as src, nr.action_idx as dst, 'resource' as kind,
        min(w.resource) as evidence, false as any_span, false as control_span, true as any_control,
        null::bigint as content_conf, null::bigint as content_integ
    from (select * from resources anti join too_many using (trajectory_id)) w
    join nodes nw on nw.trajectory_id = w.trajectory_id and nw.call_step_idx = w.step_idx and nw.executed
    join resources r
        on r.trajectory_id = w.trajectory_id and r.access in ('read', 'execute')
       and regexp_replace(r.resource, '^\./', '') = regexp_replace(w.resource, '^\./', '')
    join nodes nr on nr.trajectory_id = r.trajectory_id and nr.call_step_idx = r.step_idx
    where w.access = 'write' and nr.call_step_idx > coalesce(nw.result_step_idx, nw.call_step_idx)
    group by all
),
explicit_edges as (
    select a.trajectory_id, c.action_idx as src, a.action_idx as dst, 'explicit' as kind,
        min(d.dep) as evidence, false as any_span, false as control_span, true as any_control,
        null::bigint as content_conf, null::bigint as content_integ
    from (select trajectory_id, action_idx, unnest(depends_on) as dep
          from actions anti join too_many using (trajectory_id)) d
    join actions a using (trajectory_id, action_idx)
    join call_actions c on c.trajectory_id = d.trajectory_id and c.call_id = d.dep
    join nodes ns on ns.trajectory_id = c.trajectory_id and ns.action_idx = c.action_idx and ns.executed
    join nodes nd on nd.trajectory_id = a.trajectory_id and nd.action_idx = a.action_idx
    where c.action_idx < a.action_idx  -- a dependency points forward in time (SPEC: a before b)
    group by all
),
all_edges as (
    select * from data_edges
    union all select * from resource_edges
    union all select * from explicit_edges
),
final as (
    select e.trajectory_id, e.src as src_action_idx, e.dst as dst_action_idx, e.kind, e.evidence,
        -- fragments inside a content-detected span carry the detector's label; a data edge
        -- carries what the output showed (a settings file's non-credential values are
        -- internal: action_roles.conf), a resource or explicit edge the whole label (full_conf)
        greatest(case when e.kind = 'data' then n.conf else n.full_conf end, coalesce(e.content_conf, 0)) as conf,
        -- fragments inside an injection span carry integrity=untrusted
        greatest(n.integ, case when e.any_span then 1 else 0 end, coalesce(e.content_integ, 0)) as integ,
        e.any_control as control,
        case when e.any_control
            then greatest(n.integ, case when e.control_span then 1 else 0 end, coalesce(e.content_integ, 0))
        end as control_integ,
        -- text of an injection span chose the destination's effect (an injection-driven action)
        coalesce(e.control_span, false) as control_injected
    from all_edges e
    join nodes n on n.trajectory_id = e.trajectory_id and n.action_idx = e.src
),
over_bound as (
    -- moved to edge_rejects by the stage (see the header); never in the edges table
    select trajectory_id, 'too_many_pairs' as kind,
        (resource + data + explicit) || ' rows (resource ' || resource || ', data ' || data
            || ', explicit ' || explicit || ')' as evidence
    from too_many
)
select * from final
union all by name
select * from over_bound
