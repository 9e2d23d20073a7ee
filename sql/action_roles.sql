-- action_roles: the taint role of each executed or blocked logical action
-- (grain: trajectory_id, action_idx, sink_kind; sink_kind null when not a sink).
-- Inputs: actions, resources, resource_labels, steps (user messages), policy_tools, policy_sinks,
-- policy_document (labels.user_named_sources, labels.common_file_names), policy_settings_files.
-- Parameters: none.
-- Label levels are integers: confidentiality 0 public, 1 internal, 2 secret;
-- integrity 0 trusted, 1 untrusted. Joining labels is taking the max of each.
with live as (
    -- non-events (failed, not blocked) never affect a verdict
    select a.trajectory_id, a.action_idx, a.tool_name, a.call_step_idx, a.result_step_idx,
        a.executed, a.blocked, t.catalog_name,
        -- a tool inference placed only by an argument is a sink, and a source (a fetch's
        -- untrusted page), for the calls that pass it
        case when a.role_source <> 'none' then t.source_conf end as source_conf,
        case when a.role_source <> 'none' then t.source_integ end as source_integ,
        case when a.role_source <> 'none' then t.sink_kind end as sink_kind,
        t.shell_arg is not null or t.code_arg is not null as is_program
    from actions a
    left join policy_tools t on t.tool_key = lower(a.tool_name)
    where a.executed or a.blocked
),
action_resources as (
    select l.trajectory_id, l.action_idx, r.access, r.resource
    from live l join resources r on r.trajectory_id = l.trajectory_id and r.step_idx = l.call_step_idx
),
resource_matches as (
    -- a read (or executed) resource the policy labels (sql/resource_labels.sql, where an
    -- override rule matching a resource leaves only override rules counting) brings its label in
    select ar.trajectory_id, ar.action_idx, ar.resource, rl.conf, rl.integ,
        -- a key=value settings file (labels.settings_files): its credentials alone are secret
        exists (select 1 from policy_settings_files f where ar.resource ilike f."like" escape '\') as settings
    from action_resources ar
    join resource_labels rl using (resource)
    where ar.access in ('read', 'execute')
),
action_labels as (
    -- the join of the labels; `why` the most labelled resource (conf first), among equals
    -- the first by name
    select trajectory_id, action_idx,
        max(conf) as conf, max(integ) as integ,
        -- the label with each settings file's capped at internal: what the action's output
        -- carries outside its credentials when it parses as the settings file (settings_outputs)
        max(case when settings then least(conf, 1) else conf end) as settings_conf,
        first(resource order by conf * 2 + integ desc, resource) as why
    from resource_matches
    group by all
),
user_text as (
    -- what the user's own messages say (the principal's instruction), and its words as a
    -- file name is written (split at anything a name seldom holds, a sentence's final dot
    -- dropped), so a name is matched whole: "my_contact.txt" names no "contact.txt"
    select trajectory_id, txt,
        list_transform(regexp_split_to_array(txt, '[^a-z0-9._~-]+'), lambda w: rtrim(w, '.')) as words,
        -- and its words as an address is written (split at blanks, quotes and brackets),
        -- normalised as `addresses` normalises one (a sentence's final dot or colon dropped)
        list_transform(regexp_split_to_array(txt, '[\s"''`<>()\[\]{},;!|*]+'),
            lambda w: regexp_replace(regexp_replace(regexp_replace(w, '^[a-z][a-z0-9+.-]*://', ''), '^www[.]', ''),
                                     '[/.:?]+$', '')) as address_words
    from (select trajectory_id, lower(string_agg(content, ' ')) as txt
          from steps where kind = 'user' and content is not null
          group by all)
),
common_file_names as (
    -- names too common to say which file the user meant (policy labels.common_file_names)
    select coalesce(list_transform(json_extract_string(json, '$.labels.common_file_names[*]'), lambda n: lower(n)),
                    []) as names
    from policy_document
),
addresses as (
    -- what an action reads from (a path read, a URL fetched) as an address: scheme, `www.`
    -- and trailing slashes dropped, so `https://www.x.example/` matches a user's "x.example"
    select trajectory_id, action_idx,
        regexp_replace(regexp_replace(regexp_replace(lower(resource), '^[a-z][a-z0-9+.-]*://', ''),
            '^www[.]', ''), '/+$', '') as addr,
        -- a bare relative name read (`contact.txt`) is judged by its file name alone, whole
        access = 'send' or regexp_matches(resource, '[/\\]') as addressed,
        -- a local file's name (`/users/jd/downloads/company_contact.txt` -> its last part):
        -- users name a file by its name, not by the folder the agent found it in. Only a
        -- path read or run: a URL's last segment names nothing (the host chooses what it
        -- serves), with a scheme or without (`evil.example/report.html`: a dot before the
        -- first slash), and a name everyone uses (README.md) names no particular file
        case when access <> 'send'
                  and regexp_matches(lower(resource), '^(/|~|[.]{1,2}/|[a-z]:[\\/]|[^./:\\]*/|[^/:\\]*$)')
             then nullif(regexp_extract(lower(resource), '[^/\\]+$'), '') end as path_name
    from action_resources where access in ('read', 'execute', 'send')
),
named_addresses as (
    -- an address the user's messages spell out whole (at least 4 characters with a dot or
    -- a slash: "see dora-site.example/guestbook" names no dora-site.example), or a local
    -- file whose whole name they spell out (a name with an extension: 4+ characters
    -- holding a dot after its first)
    select a.trajectory_id, a.action_idx,
        coalesce(a.addressed and length(a.addr) >= 4 and regexp_matches(a.addr, '[./]')
                    and list_contains(u.address_words, a.addr)
                 or length(a.path_name) >= 4 and regexp_matches(a.path_name, '^[^.].*[.][a-z0-9]')
                    and list_contains(u.words, a.path_name)
                    and not list_contains((select names from common_file_names), a.path_name), false) as named
    from addresses a left join user_text u using (trajectory_id)
),
user_named as (
    -- an action whose every read address the user named reads the source the user chose
    -- (policy labels.user_named_sources = "trusted"; "untrusted" keeps the tool's label)
    select trajectory_id, action_idx
    from named_addresses
    where (select coalesce(json_extract_string(json, '$.labels.user_named_sources'), 'untrusted')
           from policy_document) = 'trusted'
    group by all
    having bool_and(named)
),
labels as (
    select l.*,
        greatest(coalesce(l.source_conf, 0), coalesce(rl.conf, 0)) as conf,
        greatest(coalesce(l.source_conf, 0), coalesce(rl.settings_conf, 0)) as settings_conf,
        -- the user's choice of source lifts its tool and address integrity; instructions
        -- inside its output (injection spans, content rules) still carry untrusted (edges)
        case when n.action_idx is not null then 0
             else greatest(coalesce(l.source_integ, 0), coalesce(rl.integ, 0)) end as integ,
        rl.why as label_resource
    from live l left join action_labels rl using (trajectory_id, action_idx)
    left join user_named n using (trajectory_id, action_idx)
),
derived_sinks as (
    -- shell and code steps are sinks by what they do; a send to this machine's loopback
    -- (`curl localhost:8000/api`: a dev server under test) leaves no trust boundary
    select distinct ar.trajectory_id, ar.action_idx,
        case ar.access when 'send' then 'egress' when 'execute' then 'execute'
                       when 'delete' then 'destructive' end as sink_kind
    from action_resources ar
    join live l using (trajectory_id, action_idx)
    where l.is_program and ar.access in ('send', 'execute', 'delete')
      and not (ar.access = 'send' and lg_loopback(ar.resource))
),
sink_rows as (
    select trajectory_id, action_idx, sink_kind from live where sink_kind is not null
    union
    select trajectory_id, action_idx, sink_kind from derived_sinks
),
final as (
    select lb.trajectory_id, lb.action_idx, lb.tool_name, lb.catalog_name, lb.call_step_idx,
        lb.result_step_idx, lb.executed, lb.blocked, lb.conf, lb.integ, lb.label_resource,
        -- `conf` is what data edges from the action carry; `full_conf` what a resource or
        -- explicit edge carries (a copy of the file, not the output). Equal but for an action
        -- whose output parsed as a settings file (pipeline/stages/settings.py lowers `conf`)
        lb.conf as full_conf, lb.settings_conf,
        s.sink_kind,
        coalesce(pt.accepts_conf, ps.accepts_conf) as accepts_conf,
        coalesce(pt.accepts_integ, ps.accepts_integ) as accepts_integ,
        coalesce(pt.control_conf, ps.control_conf) as control_conf,
        coalesce(pt.control_integ, ps.control_integ) as control_integ
    from labels lb
    left join sink_rows s using (trajectory_id, action_idx)
    left join policy_sinks ps on ps.sink_kind = s.sink_kind
    -- a tool's own accepts override its sink kind's, for its catalog sink only
    left join policy_tools pt on pt.tool_key = lower(lb.tool_name) and pt.sink_kind = s.sink_kind
)
select * from final
