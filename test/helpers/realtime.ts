// supabase-js 2.109 on Node 20 needs a WebSocket for its realtime client even
// when a test never subscribes (createClient throws without one). npm `ws` is
// that WebSocket; its class differs from the DOM's in typing only.
import type { SupabaseClientOptions } from '@supabase/supabase-js'
import ws from 'ws'

type Transport = NonNullable<NonNullable<SupabaseClientOptions<'public'>['realtime']>['transport']>

/** The `realtime` option every Node test client passes. */
export const nodeRealtime = { transport: ws as unknown as Transport }
