/**
 * What the access policy knows about ffmpeg's command-line options (ffmpeg 5.1 to 7.1,
 * `fftools/ffmpeg_opt.c`, `cmdutils.c`, and the muxer/demuxer/filter documentation).
 *
 * Why arity matters: ffmpeg takes any token that is neither an option nor an option's value as an
 * output address, so a bare `/outside/x` among the options writes a file. The scanner must know
 * which options take no value; every other option takes exactly one.
 *
 * Past 300 lines because it is data: one table per way an option is used, each read by the
 * scanner (option-check.ts) and nothing else; split by table, every reader would import them all.
 */

/** ffmpeg options that take no value (also accepted with a `no` prefix, e.g. `-nostdin`). */
export const FLAG_OPTIONS: ReadonlySet<string> = new Set([
  // cmdutils: information and exit, or logging switches
  'L',
  'h',
  '?',
  'help',
  '-help',
  'version',
  'buildconf',
  'formats',
  'muxers',
  'demuxers',
  'devices',
  'codecs',
  'decoders',
  'encoders',
  'bsfs',
  'protocols',
  'filters',
  'pix_fmts',
  'layouts',
  'sample_fmts',
  'dispositions',
  'colors',
  'hwaccels',
  'report',
  'hide_banner',
  // ffmpeg_opt.c
  'y',
  'n',
  'ignore_unknown',
  'copy_unknown',
  'recast_media',
  'benchmark',
  'benchmark_all',
  'stdin',
  'dump',
  'hex',
  're',
  'copyts',
  'start_at_zero',
  'shortest',
  'accurate_seek',
  'seek_timestamp',
  'xerror',
  'stats',
  'debug_ts',
  'intra',
  'vn',
  'an',
  'sn',
  'dn',
  'psnr',
  'vstats',
  'qphist',
  'fix_sub_duration',
  'fix_sub_duration_heartbeat',
  'autorotate',
  'autoscale',
  'find_stream_info',
  'copyinkf',
  'display_hflip',
  'display_vflip',
  'deinterlace',
  'override_ffserver',
  'print_graphs',
]);

/**
 * The server's own options (docs/processes.md#process-config "options it needs for itself"): it reads progress and
 * per-frame statistics through them, so a process config must not set or redirect them.
 */
export const SERVER_OPTIONS: ReadonlySet<string> = new Set([
  'progress',
  'vstats',
  'vstats_file',
  'vstats_version',
  'stats_period',
]);

/**
 * Options refused for what they do, with the reason. `-report` takes effect wherever it stands
 * (ffmpeg looks for it in the whole command line before parsing it) and writes `ffmpeg-*.log`,
 * with the whole command line and its credentials, into the working directory: the disk
 * filesystem, which anyone may read over HTTP.
 */
export const REFUSED_OPTIONS: ReadonlyMap<string, string> = new Map([
  ['report', 'writes a log with the whole command line into the public disk filesystem'],
]);

/**
 * Boolean options whose default keeps a demuxer inside the directories the policy checked: a
 * value ffmpeg does not read as `required` (option-value.ts, every spelling) is refused.
 */
export const GUARDED_BOOLEANS: ReadonlyMap<string, { required: number; because: string }> = new Map([
  // The concat demuxer's safe mode: off, a list may name any file (absolute, `..`, protocols).
  ['safe', { required: 1, because: 'with safe mode off a concat list may name any file' }],
]);

/** How the value of an option is used. */
export type OptionUse =
  /** Another input address (`-i` inside an options list). */
  | 'input-address'
  /** A file or URL the encoder reads. */
  | 'read'
  /** A file or URL the encoder writes. */
  | 'write'
  /** A name next to the output, e.g. `master_pl_name`: no directory part allowed. */
  | 'sibling-name'
  /** `-var_stream_map`: its `name:`s replace `%v` in output names (variant-names.ts). */
  | 'variant-names'
  /** The value's contents are options or a filtergraph the policy cannot see: refused. */
  | 'unreadable';

/** Options whose value names a file or URL (stream specifiers such as `:v:0` are stripped first). */
export const FILE_OPTIONS: ReadonlyMap<string, OptionUse> = new Map<string, OptionUse>([
  ['i', 'input-address'],
  // ffmpeg CLI
  ['attach', 'read'],
  ['fpre', 'read'],
  ['dump_attachment', 'write'],
  ['passlogfile', 'write'],
  ['sdp_file', 'write'],
  ['stats_enc_pre', 'write'],
  ['stats_enc_post', 'write'],
  ['stats_mux_pre', 'write'],
  ['enc_stats_pre', 'write'],
  ['enc_stats_post', 'write'],
  ['mux_stats', 'write'],
  ['print_graphs_file', 'write'],
  ['filter_script', 'unreadable'],
  ['filter_complex_script', 'unreadable'],
  // muxers
  ['hls_segment_filename', 'write'],
  ['hls_subtitle_path', 'write'],
  ['hls_key_info_file', 'read'],
  ['hls_fmp4_init_filename', 'sibling-name'],
  ['master_pl_name', 'sibling-name'],
  ['init_seg_name', 'sibling-name'],
  ['media_seg_name', 'sibling-name'],
  ['single_file_name', 'sibling-name'],
  ['hls_master_name', 'sibling-name'],
  ['var_stream_map', 'variant-names'],
  ['segment_list', 'write'],
  ['header', 'write'],
  // demuxers and protocols
  ['graph_file', 'unreadable'],
  ['cert_file', 'read'],
  ['key_file', 'read'],
  ['ca_file', 'read'],
  ['cafile', 'read'],
  ['http_proxy', 'read'],
]);

/**
 * Options whose value is plain text that ffmpeg never opens (HTTP headers, metadata): their values
 * are not scanned for paths. Each takes a value, so a bare token cannot hide behind them.
 */
export const TEXT_OPTIONS: ReadonlySet<string> = new Set([
  'metadata',
  'headers',
  'user_agent',
  'user-agent',
  'referer',
  'cookies',
  'timecode',
  'hls_base_url',
  'hls_enc_key_url',
  'segment_list_entry_prefix',
  'method',
  'content_type',
  'auth_type',
  'title',
  'author',
  'comment',
  'copyright',
  'description',
  'cc_stream_map',
  'adaptation_sets',
  'hls_flags',
  'movflags',
]);

/**
 * Options whose values are filtergraphs. Their filters can open files (`movie=`, `drawtext=
 * textfile=`), load code (`frei0r`, `ladspa`) or take commands (`sendcmd`), see filtergraph.ts.
 */
export const FILTERGRAPH_OPTIONS: ReadonlySet<string> = new Set([
  'vf',
  'af',
  'filter',
  'filter_complex',
  'lavfi',
  'graph',
]);

/**
 * Device formats: their "address" is a device, not a file or URL. Refused unless listed in
 * `ffmpeg.access.devices`.
 */
export const DEVICE_FORMATS: ReadonlySet<string> = new Set([
  'alsa',
  'android_camera',
  'audiotoolbox',
  'avfoundation',
  'bktr',
  'caca',
  'decklink',
  'dshow',
  'fbdev',
  'gdigrab',
  'iec61883',
  'jack',
  'kmsgrab',
  'libcdio',
  'libdc1394',
  'openal',
  'opengl',
  'oss',
  'pulse',
  'sdl',
  'sdl2',
  'sndio',
  'v4l2',
  'video4linux2',
  'vfwcap',
  'x11grab',
  'xcbgrab',
  'xv',
]);

/** Filters that load code, open sockets or change other filters' options at run time. */
export const DENIED_FILTERS: readonly string[] = [
  'frei0r',
  'frei0r_src',
  'ladspa',
  'lv2',
  'zmq',
  'azmq',
  'sendcmd',
  'asendcmd',
  'program_opencl',
  'openclsrc',
  'dnn_processing',
  'dnn_detect',
  'dnn_classify',
  'sr',
  'ocr',
  'lensfun',
  'coreimage',
  'coreimagesrc',
  'libplacebo',
];

/** Network protocols encoders may use (the host is checked, see network-target.ts). */
export const NETWORK_PROTOCOLS: ReadonlySet<string> = new Set([
  'http',
  'https',
  'rtmp',
  'rtmps',
  'rtmpe',
  'rtmpt',
  'rtmpte',
  'rtmpts',
  'rtsp',
  'rtsps',
  'srt',
  'udp',
  'tcp',
  'tls',
  'dtls',
  'rtp',
  'srtp',
  'rist',
  'mmsh',
  'mmst',
  'ftp',
  'icecast',
  'gopher',
  'gophers',
  'prompeg',
]);

/**
 * Protocols that reach local things (files, descriptors, sockets) or wrap another address; inside
 * an option's value (where the policy cannot follow the nesting) each is refused.
 */
export const LOCAL_PROTOCOLS: readonly string[] = [
  'file',
  'pipe',
  'fd',
  'unix',
  'tee',
  'md5',
  'crypto',
  'cache',
  'async',
  'subfile',
  'concat',
  'concatf',
  'data',
  'hls',
  'bluray',
  'ipfs',
  'ipns',
  'sftp',
  'android_content',
  'libsmbclient',
  'smb',
];
