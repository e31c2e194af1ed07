import vm from 'node:vm';
import { transformSync } from 'esbuild';

// A small app, compiled and minified as a release build would be, then run so V8 writes the
// stack a browser would send.
export const SOURCE = `export interface Order { id: number; total?: number }

function findOrder(orders: Order[], id: number): Order {
  const found = orders.find((o) => o.id === id);
  if (!found) {
    throw new Error('Order ' + id + ' not found');
  }
  return found;
}

export function loadOrder(orders: Order[], id: number): number {
  const order = findOrder(orders, id);
  return order.total ?? 0;
}

export function checkout(id: number): number {
  return loadOrder([{ id: 1 }], id);
}
`;

/** The minified bundle of SOURCE (esbuild, as Vite ships it), its map, and the stack it throws at `url`. */
export function release(url: string, hash: string) {
  const out = transformSync(SOURCE, {
    loader: 'ts',
    format: 'iife',
    globalName: 'app',
    minify: true,
    sourcemap: 'external',
    sourcefile: 'src/orders.ts',
  });
  const code = `${out.code}//# sourceMappingURL=index-${hash}.js.map\n`;
  const ctx = vm.createContext({});
  vm.runInContext(code, ctx, { filename: url });
  const stack = String(
    vm.runInContext('try { app.checkout(1042); "" } catch (e) { e.stack }', ctx, {
      filename: 'https://shop.example.com/',
    }),
  );
  return { code, map: out.map, stack };
}

// A hand-written mapping.txt in R8's format: class renames, line ranges, an inlined method from
// another class, the source file metadata, a method without line information.
export const MAPPING = `# compiler: R8
# compiler_version: 8.2.42
# min_api: 24
# pg_map_id: 4e1b2c3
com.shop.orders.OrderRepository -> c.a.b:
# {"id":"sourceFile","fileName":"OrderRepository.kt"}
    java.util.Map cache -> a
    1:3:com.shop.orders.Order load(long):55:57 -> a
    4:4:void com.shop.util.Checks.requireFound(java.lang.Object):12:12 -> a
    4:4:com.shop.orders.Order load(long):58 -> a
    5:6:void refresh():70:71 -> b
    void clear() -> c
com.shop.util.Checks -> c.a.c:
# {"id":"sourceFile","fileName":"Checks.kt"}
    1:1:void requireFound(java.lang.Object):12:12 -> a
com.shop.orders.OrderNotFoundException -> c.a.d:
# {"id":"sourceFile","fileName":"OrderNotFoundException.kt"}
com.shop.orders.OrderViewModel$refresh$1 -> c.a.e:
    1:1:java.lang.Object invokeSuspend(java.lang.Object):31:31 -> invokeSuspend
`;
