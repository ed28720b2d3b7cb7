// The signed-in user's package settings (Forgejo's /user/settings/packages): the key pair of the
// Chef registry. Making a new pair keeps its public key and hands the private key over once, as a
// download (`{name}.priv`, what knife's `client_key` names); the old pair stops working.
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import type { PageContext } from '../../web/layout.js';
import type { PageRoutes, Web } from '../../web/plugin.js';
import { DangerForm, Section, SettingsLayout, USER_SETTINGS_NAV } from '../../web/settings.js';
import type { ChefService } from './service.js';

export interface ChefPagesDeps {
  chef: Pick<ChefService, 'hasKey' | 'regenerateKeyPair' | 'base'>;
}

const PAGE = '/user/settings/packages';

function PackageSettingsPage(props: { page: PageContext; hasKey: boolean; registry: string }): VNode {
  const { page } = props;
  return (
    <SettingsLayout page={page} title="Packages" area="User settings" nav={USER_SETTINGS_NAV} active={PAGE}>
      <Section title="Chef registry">
        <p>
          The Chef registry does not take passwords: knife signs its requests with a private key whose public
          key is kept here. Use your user name as knife's <code>client_name</code> and the downloaded key as
          its <code>client_key</code>, with <code>{props.registry}</code> as the Supermarket site.
        </p>
        <p data-chef-key={props.hasKey ? 'set' : 'none'}>
          {props.hasKey
            ? 'A key pair is set. Making a new one replaces it: the old private key stops working.'
            : 'No key pair is set yet.'}
        </p>
        <DangerForm
          page={page}
          action={`${PAGE}/chef/regenerate_keypair`}
          button="Regenerate key pair"
          confirm="The private key you use now will stop working. Make a new key pair?"
        />
      </Section>
    </SettingsLayout>
  );
}

export function chefPages(deps: ChefPagesDeps): PageRoutes {
  return (app: FastifyInstance, web: Web) => {
    app.get(PAGE, async (request, reply) => {
      const user = web.requireUser(request);
      return web.send(
        reply,
        <PackageSettingsPage
          page={web.page(request)}
          hasKey={await deps.chef.hasKey(user)}
          registry={deps.chef.base(user).replace(/\/api\/v1$/, '')}
        />,
      );
    });

    app.post(`${PAGE}/chef/regenerate_keypair`, async (request, reply) => {
      const user = web.requireUser(request);
      const pem = await deps.chef.regenerateKeyPair(user);
      return reply
        .header('Cache-Control', 'no-store')
        .header('Content-Disposition', `attachment; filename="${user.name}.priv"`)
        .type('application/x-pem-file')
        .send(pem);
    });
  };
}
